/**
 * The MCP process's principal cache (mcp/principal-cache.ts) trusts an entry only while its change feed is
 * current: when the feed cannot read, a key's principal is read again rather than served from memory, so a
 * revocation still stops the key within the documented bound instead of the entry's 30 s TTL.
 */
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { useMigratedTempDb, seedOrg } from '../../helpers/db.js';
import type { DbHandles } from '../../../core/db/database.js';
import { systemClock } from '../../../core/clock.js';
import { createLogger } from '../../../core/log.js';
import type { Config } from '../../../core/config.js';
import { PrincipalCache } from '../../../mcp/principal-cache.js';

let dir: string;
let h: DbHandles;
useMigratedTempDb((d) => ({ dir, h } = d));

async function refusedWithin(cache: PrincipalCache, key: string, ms: number): Promise<string | undefined> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    try {
      await cache.ofApiKey(key);
    } catch (e) {
      return (e as { code?: string }).code;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return undefined;
}

describe('MCP principal cache', () => {
  it('a key revoked while the change feed cannot read is refused within the bound, not served for the TTL', async () => {
    const org = await seedOrg(h);
    const ctx = {
      db: h.db,
      clock: systemClock,
      log: createLogger('test', 'silent'),
      config: { dbFile: join(dir, 'svc.db') } as Config,
    };
    const cache = await PrincipalCache.open(ctx, { pollMs: 20 });
    try {
      expect((await cache.ofApiKey(org.key)).keyId).toBe(org.keyId);
      // The feed's reads start failing (here: its table is gone for a while), and the key is revoked meanwhile.
      h.sqlite.exec('ALTER TABLE changes RENAME TO changes_away');
      h.sqlite.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ?').run(Date.now(), org.keyId);
      expect(await refusedWithin(cache, org.key, 5_000)).toBe('key_revoked');
    } finally {
      cache.close();
      h.sqlite.exec('ALTER TABLE changes_away RENAME TO changes');
    }
  });
});
