/**
 * The shared change feed (core/db/change-feed.ts) that drops the gateway's cached keys and listings and the MCP
 * process's cached principals: every change row reaches its reader, however many arrive between two polls.
 */
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import Sqlite from '../../../core/db/sqlite-driver.js';
import { useMigratedTempDb } from '../../helpers/db.js';
import type { DbHandles } from '../../../core/db/database.js';
import { ChangeFeed, type ChangeRow } from '../../../core/db/change-feed.js';

let dir: string;
let h: DbHandles;
useMigratedTempDb((d) => ({ dir, h } = d));

describe('change feed', () => {
  it('a backlog larger than one read is delivered in full without waiting for another commit', () => {
    const reader = new Sqlite(join(dir, 'svc.db'), { readonly: true, fileMustExist: true });
    try {
      const seen: ChangeRow[] = [];
      const feed = new ChangeFeed(
        reader,
        (rows) => seen.push(...rows),
        () => {},
        (e) => {
          throw e;
        },
      );
      // One burst (a bulk job, or a reader that fell behind): more rows than one read takes, the revocation last.
      const insert = h.sqlite.prepare("INSERT INTO changes (entity, entity_id, created_at) VALUES ('org', ?, ?)");
      h.sqlite.transaction(() => {
        for (let i = 0; i < 10_050; i++) insert.run(`org_${i}`, 1);
        h.sqlite.prepare("INSERT INTO changes (entity, entity_id, created_at) VALUES ('key', 'key_revoked', 1)").run();
      })();
      // Nothing else commits after the burst: later polls alone must reach its end.
      for (let i = 0; i < 3; i++) feed.poll();
      expect(seen).toHaveLength(10_051);
      expect(seen.at(-1)).toMatchObject({ entity: 'key', entity_id: 'key_revoked' });
    } finally {
      reader.close();
    }
  });
});
