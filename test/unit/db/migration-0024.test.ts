/** 0024: a listing's ranks are read through an index on api_id, not a scan of every board's entries. */
import { afterEach, describe, expect, it } from 'vitest';
import { openMigratedTempDb } from '../../helpers/db.js';

let close: (() => Promise<void>) | null = null;
afterEach(async () => {
  await close?.();
  close = null;
});

describe('migration 0024_leaderboard_api_index (SQLite)', () => {
  it("a listing's ranks query searches by api_id; down drops the index again", async () => {
    const { h, close: done } = await openMigratedTempDb();
    close = done;
    // The statement listingRanks compiles (control/catalog/inspect.service.ts), read back from kysely.
    const q = h.db
      .selectFrom('leaderboard_entries')
      .select(['board', 'category', 'rank', 'score', 'computed_at'])
      .where('api_id', '=', 'api_x')
      .orderBy('board')
      .orderBy('category')
      .compile();
    const plan = () =>
      (h.sqlite.prepare(`EXPLAIN QUERY PLAN ${q.sql}`).all(...q.parameters) as { detail: string }[])
        .map((r) => r.detail)
        .join('; ');
    expect(plan()).toMatch(/SEARCH leaderboard_entries USING INDEX leaderboard_entries_api \(api_id=\?\)/);
    const { down } = await import('../../../core/db/migrations/0024_leaderboard_api_index.js');
    await down(h.db);
    expect(plan()).toMatch(/SCAN leaderboard_entries/);
  });
});
