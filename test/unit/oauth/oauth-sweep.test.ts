import { describe, expect, it } from 'vitest';
import { useMigratedTempDb, seedOrg } from '../../helpers/db.js';
import type { DbHandles } from '../../../core/db/database.js';
import { sweepOAuth } from '../../../control/oauth/oauth.jobs.js';

let h: DbHandles;
useMigratedTempDb((d) => {
  h = d.h;
});

const DAY = 86_400_000;

async function grantWithTokens(expiresAt: number[]) {
  const org = await seedOrg(h);
  await h.db
    .insertInto('oauth_clients')
    .values({
      id: 'oc_1',
      kind: 'registered',
      client_name: null,
      redirect_uris: '[]',
      metadata: '{}',
      created_at: 0,
      fetched_at: null,
    })
    .onConflict((oc) => oc.doNothing())
    .execute();
  const grantId = `ogr_${org.orgId}`;
  await h.db
    .insertInto('oauth_grants')
    .values({
      id: grantId,
      client_id: 'oc_1',
      org_id: org.orgId,
      user_id: org.userId,
      key_id: org.keyId,
      key_minted: 1,
      key_secret: null,
      resource: 'http://mcp/mcp',
      scope: '',
      created_at: 0,
      revoked_at: null,
      revoked_reason: null,
    })
    .execute();
  for (const [i, at] of expiresAt.entries())
    await h.db
      .insertInto('oauth_tokens')
      .values({
        token_hash: `${grantId}-${i}`,
        kind: 'refresh',
        grant_id: grantId,
        created_at: 0,
        expires_at: at,
        rotated_at: 0,
        revoked_at: null,
      })
      .execute();
}

describe('sweepOAuth', () => {
  it('deletes tokens a day past expiry and keeps spent refresh tokens that have not expired', async () => {
    const now = 100 * DAY;
    await grantWithTokens([now - 2 * DAY, now - DAY / 2, now + DAY]);
    expect(await sweepOAuth(h.db, now)).toEqual({ codes: 0, tokens: 1, stepUps: 0 });
    const left = await h.db.selectFrom('oauth_tokens').select('expires_at').orderBy('expires_at').execute();
    expect(left.map((t) => t.expires_at)).toEqual([now - DAY / 2, now + DAY]);
  });
});
