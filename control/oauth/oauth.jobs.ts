/**
 * Hourly sweep of OAuth rows nobody can use any more: codes, tokens and step-up handles a day past expiry. Spent
 * refresh tokens stay until they expire, so a replay inside their lifetime is still caught (and revokes the grant).
 */
import type { AppContext } from '../context.js';
import type { Db } from '../../core/db/database.js';
import { intervalJob } from '../lib/interval-job.js';

const GRACE_MS = 86_400_000;

export async function sweepOAuth(db: Db, now: number): Promise<{ codes: number; tokens: number; stepUps: number }> {
  const before = now - GRACE_MS;
  const codes = await db.deleteFrom('oauth_codes').where('expires_at', '<', before).executeTakeFirst();
  const tokens = await db.deleteFrom('oauth_tokens').where('expires_at', '<', before).executeTakeFirst();
  const stepUps = await db.deleteFrom('oauth_step_ups').where('expires_at', '<', before).executeTakeFirst();
  return {
    codes: Number(codes.numDeletedRows),
    tokens: Number(tokens.numDeletedRows),
    stepUps: Number(stepUps.numDeletedRows),
  };
}

export function oauthSweepJob(ctx: AppContext): () => void {
  return intervalJob(ctx.log, 'oauth-sweep', 3_600_000, () => sweepOAuth(ctx.db, ctx.clock.now()), {
    firstAfterMs: 60_000,
    db: ctx.db,
  });
}
