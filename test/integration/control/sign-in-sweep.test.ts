/**
 * The hourly sign-in sweep deletes login codes, `svc login` handshakes, email-verification links and sessions a day
 * after they stopped being usable, and nothing that still works: a live session keeps authenticating.
 */
import { describe, expect, it } from 'vitest';
import { useInProcessControl } from '../../helpers/in-process.js';
import { sweepSignIn } from '../../../control/sessions/sessions.jobs.js';
import { endSession, insertSession, requestLoginCode } from '../../../control/sessions/sessions.service.js';
import { startDeviceLogin } from '../../../control/sessions/cli-login.service.js';
import { registerAnonymous, requestOrgEmail } from '../../../control/orgs/orgs.service.js';
import { seedOrg } from '../../helpers/db.js';
import { principalFromToken } from '../../../control/auth/principal.js';

const control = useInProcessControl();
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

async function rowCounts() {
  const { db } = control().ctx;
  const n = async (t: 'login_codes' | 'cli_logins' | 'email_verifications' | 'sessions') =>
    Number(
      (
        await db
          .selectFrom(t)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return {
    loginCodes: await n('login_codes'),
    cliLogins: await n('cli_logins'),
    emailVerifications: await n('email_verifications'),
    sessions: await n('sessions'),
  };
}

describe('sign-in sweep', () => {
  it('removes each kind of row a day after it expired or ended, and keeps a live session working', async () => {
    const { ctx } = control();
    const now = ctx.clock.now();
    const person = await seedOrg(ctx); // a verified owner; its seeded session lasts one day
    const agent = await registerAnonymous(ctx);
    await requestLoginCode(ctx, { email: person.email }, { ip: '127.0.0.1' });
    await startDeviceLogin(ctx, 'http://127.0.0.1');
    await requestOrgEmail(ctx, await principalFromToken(ctx, agent.api_key), 'sweep-agent@example.test');
    const live = await insertSession(ctx.db, person, now); // 30 days
    const ended = await insertSession(ctx.db, person, now);
    await endSession(ctx, await principalFromToken(ctx, ended.token));
    // Both mails (login code, verification link) are written to the dev outbox after the answer; let them land.
    await expect
      .poll(async () => (await ctx.db.selectFrom('outbox').select('id').execute()).length, { timeout: 5000 })
      .toBe(2);
    const before = await rowCounts();
    expect(before).toEqual({ loginCodes: 1, cliLogins: 1, emailVerifications: 1, sessions: 3 });

    // Expired, but within the day of grace (the login-mail limit still counts these codes): nothing goes.
    expect(await sweepSignIn(ctx.db, now + HOUR)).toEqual({
      loginCodes: 0,
      cliLogins: 0,
      emailVerifications: 0,
      sessions: 0,
    });
    // Two days on: the code, the handshake, the link (24 h), the one-day session and the ended one are past grace.
    expect(await sweepSignIn(ctx.db, now + 2 * DAY + HOUR)).toEqual({
      loginCodes: 1,
      cliLogins: 1,
      emailVerifications: 1,
      sessions: 2,
    });
    expect(await rowCounts()).toEqual({ loginCodes: 0, cliLogins: 0, emailVerifications: 0, sessions: 1 });
    expect((await control().call('GET', '/v1/me', { token: live.token })).status).toBe(200);
    expect((await control().call('GET', '/v1/me', { token: ended.token })).status).toBe(401);
    // Past the session's own 30 days plus grace, the live one goes too.
    expect((await sweepSignIn(ctx.db, now + 32 * DAY)).sessions).toBe(1);
  });
});
