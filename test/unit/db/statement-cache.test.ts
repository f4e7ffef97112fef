/**
 * kysely's SQLite driver prepares every query; `openDatabase` gives it a per-connection statement cache instead
 * (core/db/database.ts). These tests pin what makes that safe: one prepare per SQL text, bounded size, correct rows
 * through transactions and streams, and statements that follow schema changes (migrations run on the same handle).
 */
import { afterEach, describe, expect, it } from 'vitest';
import Sqlite from '../../../core/db/sqlite-driver.js';
import { sql } from 'kysely';
import { openDatabase, withStatementCache, type DbHandles } from '../../../core/db/database.js';

const opened: Sqlite.Database[] = [];
let h: DbHandles | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
  for (const s of opened.splice(0)) if (s.open) s.close();
});

/** A raw connection whose prepare() calls are counted. */
function countingSqlite(): { sqlite: Sqlite.Database; prepares: () => number } {
  const sqlite = new Sqlite(':memory:');
  opened.push(sqlite);
  let n = 0;
  const prepare = sqlite.prepare.bind(sqlite);
  sqlite.prepare = ((text: string) => {
    n++;
    return prepare(text);
  }) as typeof sqlite.prepare;
  return { sqlite, prepares: () => n };
}

describe('statement cache under kysely', () => {
  it('prepares each SQL text once and hands back the same statement', () => {
    const { sqlite, prepares } = countingSqlite();
    const cached = withStatementCache(sqlite);
    const a = cached.prepare('SELECT 1 AS one');
    const b = cached.prepare('SELECT 1 AS one');
    expect(b).toBe(a);
    expect(prepares()).toBe(1);
    cached.prepare('SELECT 2 AS two');
    expect(prepares()).toBe(2);
  });

  it('keeps at most `size` texts, least recently used out first', () => {
    const { sqlite, prepares } = countingSqlite();
    const cached = withStatementCache(sqlite, 2);
    cached.prepare('SELECT 1');
    cached.prepare('SELECT 2');
    cached.prepare('SELECT 1'); // 1 is now the most recent
    cached.prepare('SELECT 3'); // evicts 2
    expect(prepares()).toBe(3);
    cached.prepare('SELECT 1');
    expect(prepares()).toBe(3);
    cached.prepare('SELECT 2');
    expect(prepares()).toBe(4);
  });

  it('gives right answers through kysely: repeated reads, a rolled-back transaction, a stream, a schema change', async () => {
    h = openDatabase(':memory:');
    const { db } = h;
    await sql`CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)`.execute(db);
    const insert = (id: number, v: string) => sql`INSERT INTO t (id, v) VALUES (${id}, ${v})`.execute(db);
    const all = async () => (await sql<{ id: number; v: string }>`SELECT * FROM t ORDER BY id`.execute(db)).rows;
    await insert(1, 'a');
    await insert(2, 'b');
    expect(await all()).toEqual([
      { id: 1, v: 'a' },
      { id: 2, v: 'b' },
    ]);

    await expect(
      db.transaction().execute(async (trx) => {
        await sql`INSERT INTO t (id, v) VALUES (${3}, ${'c'})`.execute(trx);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect((await all()).map((r) => r.id)).toEqual([1, 2]);

    // A stream stopped early releases its statement: the same text runs again to completion afterwards.
    const streamed: number[] = [];
    for (const row of await all()) streamed.push(row.id);
    const q = db.selectFrom(sql<{ id: number }>`(SELECT id FROM t)`.as('x')).select('x.id').orderBy('x.id');
    for await (const row of q.stream()) {
      streamed.push(row.id);
      break;
    }
    for await (const row of q.stream()) streamed.push(row.id);
    expect(streamed).toEqual([1, 2, 1, 1, 2]);

    // A migration adding a column: the cached `SELECT *` sees it.
    await sql`ALTER TABLE t ADD COLUMN w INTEGER NOT NULL DEFAULT 7`.execute(db);
    expect(await all()).toEqual([
      { id: 1, v: 'a', w: 7 },
      { id: 2, v: 'b', w: 7 },
    ]);
  });
});
