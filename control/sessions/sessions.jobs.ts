/**
 * Hourly sweep of sign-in rows nobody can use any more: login codes, `svc login` handshakes, email-verification links
 * and sessions, each a day past expiry (sessions also a day after sign-out). The day of grace keeps every row a
 * limit counts (login mail per hour) and lets a late "this link expired" answer still name the right reason.
 */
import type { AppContext } from '../context.js';
import type { Db } from '../../core/db/database.js';
import { intervalJob } from '../lib/interval-job.js';

const GRACE_MS = 86_400_000;

export interface SignInSweep {
  loginCodes: number;
  cliLogins: number;
  emailVerifications: number;
  sessions: number;
}

export async function sweepSignIn(db: Db, now: number): Promise<SignInSweep> {
  const before = now - GRACE_MS;
  const count = (r: { numDeletedRows: bigint }) => Number(r.numDeletedRows);
  return db.transaction().execute(async (trx) => ({
    loginCodes: count(await trx.deleteFrom('login_codes').where('expires_at', '<', before).executeTakeFirst()),
    cliLogins: count(await trx.deleteFrom('cli_logins').where('expires_at', '<', before).executeTakeFirst()),
    emailVerifications: count(
      await trx.deleteFrom('email_verifications').where('expires_at', '<', before).executeTakeFirst(),
    ),
    sessions: count(
      await trx
        .deleteFrom('sessions')
        .where((eb) => eb.or([eb('expires_at', '<', before), eb('ended_at', '<', before)]))
        .executeTakeFirst(),
    ),
  }));
}

export function signInSweepJob(ctx: AppContext): () => void {
  return intervalJob(ctx.log, 'sign-in-sweep', 3_600_000, () => sweepSignIn(ctx.db, ctx.clock.now()), {
    firstAfterMs: 90_000,
    db: ctx.db,
  });
}
