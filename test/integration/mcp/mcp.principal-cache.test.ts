/**
 * The MCP process keeps API keys' principals in memory (mcp/principal-cache.ts). A cached key must still stop
 * working when it is revoked or its org suspended (the change feed, as on the gateway), and a key elevated after
 * it was cached must not be refused for a scope it now holds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedKey } from '../../helpers/db.js';
import { ALL_SCOPES, REGISTER_SCOPES, formatScopes } from '../../../core/scopes.js';
import { recordChange } from '../../../core/db/changes.js';
import { rawPost, startMcpFixture, type McpFixture } from './fixture.js';
import { seedOrg } from '../../helpers/db.js';

let f: McpFixture;
beforeAll(async () => {
  f = await startMcpFixture();
}, 120_000);
afterAll(() => f.stop());

let rpcId = 0;
const callTool = (key: string, name: string) =>
  rawPost(
    f.endpoint,
    { jsonrpc: '2.0', id: ++rpcId, method: 'tools/call', params: { name, arguments: {} } },
    { authorization: `Bearer ${key}` },
  );

/** Polls until the key is refused; the gateway documents 1 s, the deadline leaves room for a loaded machine. */
async function refusedWithin(key: string, ms: number): Promise<{ status: number; code: string } | undefined> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const r = await callTool(key, 'get_balance');
    if (r.status !== 200) return { status: r.status, code: r.json?.code };
    await new Promise((res) => setTimeout(res, 50));
  }
  return undefined;
}

describe('MCP principal cache', () => {
  it('a cached key revoked on the control plane is refused on /mcp once the change feed applies it', async () => {
    const org = await seedOrg(f.db);
    const { key, keyId } = await seedKey(f.db, org.orgId, { scopes: [...ALL_SCOPES] });
    expect((await callTool(key, 'get_balance')).status).toBe(200);
    expect((await callTool(key, 'get_balance')).status).toBe(200); // served from the cache
    const res = await fetch(`${f.h.control.url}/v1/keys/${keyId}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${org.key}` },
    });
    expect(res.status).toBe(200);
    // A bearer that stopped working is 401 invalid_token on /mcp (issue 24; the reason says it was revoked).
    expect(await refusedWithin(key, 5_000)).toEqual({ status: 401, code: 'unauthorized' });
  });

  it("a cached key whose org is suspended is refused once the org's change applies", async () => {
    const org = await seedOrg(f.db);
    expect((await callTool(org.key, 'get_balance')).status).toBe(200);
    await f.db.db.transaction().execute(async (trx) => {
      await trx.updateTable('orgs').set({ status: 'suspended' }).where('id', '=', org.orgId).execute();
      await recordChange(trx, 'org', org.orgId, Date.now());
    });
    expect(await refusedWithin(org.key, 5_000)).toMatchObject({ code: 'org_suspended' });
  });

  it('a key elevated after it was cached is not refused for the scope it now holds', async () => {
    const { key, keyId } = await seedKey(f.db, f.provider.orgId, { scopes: [...REGISTER_SCOPES] });
    expect((await callTool(key, 'provider_list_apis')).status).toBe(403);
    // Elevated by another process; its change row may not have reached this MCP process yet (here: none at all).
    await f.db.db
      .updateTable('api_keys')
      .set({ scopes: formatScopes(new Set(ALL_SCOPES)) })
      .where('id', '=', keyId)
      .execute();
    const r = await callTool(key, 'provider_list_apis');
    expect(r.status).toBe(200);
    expect(r.json.result.isError).toBeFalsy();
  });
});
