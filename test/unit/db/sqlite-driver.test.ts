/**
 * Which better-sqlite3 build a Node runs (core/db/sqlite-driver.ts): the Node-API build (13) where Node-API 10 is
 * there, else 12, compiled for that Node. .ci/run says what each of its Nodes must get (SVC_TEST_EXPECT_SQLITE), so a
 * Node 24 pass that quietly fell back to 12 fails here instead of passing on the other build. That pass is also the
 * net for nodejs/node#65446 itself: with 12 built against Node 24.21's headers, checkpointer.test.ts aborted in
 * 2 of 3 runs here and first-call.test.ts's `npm start` never came up (`Assertion failed: (env) != nullptr`).
 */
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import Sqlite, { sqliteDriver } from '../../../core/db/sqlite-driver.js';

const napi = Number(process.versions.napi);

describe('the SQLite driver', () => {
  it('is the Node-API build on a Node with Node-API 10, else 12 built for this Node', () => {
    const expected = process.env.SVC_TEST_EXPECT_SQLITE ?? (napi >= 10 ? 'node-api' : 'v8-abi');
    expect(sqliteDriver.kind).toBe(expected);
    if (sqliteDriver.kind === 'node-api') {
      expect(sqliteDriver).toMatchObject({ pkg: 'better-sqlite3-napi', version: expect.stringMatching(/^13\./) });
      expect(sqliteDriver.entry).toContain(join('node_modules', 'better-sqlite3-napi'));
    } else {
      expect(sqliteDriver).toMatchObject({ pkg: 'better-sqlite3', version: expect.stringMatching(/^12\./) });
      expect(sqliteDriver.entry).toMatch(/node_modules[/\\]better-sqlite3[/\\]/);
    }
    expect(sqliteDriver.why).toContain(`Node-API ${napi}`);
  });

  it("runs svc's SQL: WAL, RETURNING, FTS5 with bm25, and its errors are Sqlite.SqliteError with a code", () => {
    const db = new Sqlite(':memory:');
    try {
      db.exec(
        'CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER NOT NULL CHECK (v >= 0)); CREATE VIRTUAL TABLE f USING fts5(body)',
      );
      expect(db.prepare('INSERT INTO t (v) VALUES (?) RETURNING id').pluck().get(5)).toBe(1);
      db.prepare('INSERT INTO f (body) VALUES (?), (?)').run('weather in lisbon', 'lisbon lisbon tides');
      const hits = db.prepare('SELECT body FROM f WHERE f MATCH ? ORDER BY bm25(f)').pluck().all('lisbon');
      expect(hits).toEqual(['lisbon lisbon tides', 'weather in lisbon']);
      let caught: unknown;
      try {
        db.prepare('UPDATE t SET v = -1').run();
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(Sqlite.SqliteError);
      expect((caught as { code: string }).code).toBe('SQLITE_CONSTRAINT_CHECK');
    } finally {
      db.close();
    }
  });
});
