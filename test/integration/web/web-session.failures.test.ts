/**
 * The web session cookie is judged only by what the token's refusal says (control/web/web-session.ts): an ended or
 * unknown session (`unauthorized`) means "not signed in" and the cookie is cleared; a database that fails while
 * resolving it is not an answer about the cookie, so the request fails loudly (500, logged with its request id) and
 * the cookie stays, still working once the database does.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../../core/config.js';
import { createAppContext, type AppContext } from '../../../control/context.js';
import { createApp } from '../../../control/app.js';
import { endSession } from '../../../control/sessions/sessions.service.js';
import { principalFromToken } from '../../../control/auth/principal.js';
import { baseEnv, tempDataDir } from '../../helpers/processes.js';
import { seedOrg } from '../../helpers/db.js';

let ctx: AppContext;
let app: ReturnType<typeof createApp>;
const data = tempDataDir();

beforeAll(async () => {
  ctx = await createAppContext(loadConfig(baseEnv(data.dir)), { process: 'test' });
  app = createApp(ctx);
});
afterAll(async () => {
  await ctx.close();
  data.cleanup();
});

/** GET /dashboard with the session cookie: the status, where it sends the browser, and what it did to the cookie. */
async function dashboard(token: string) {
  const res = await app.request('/dashboard', { headers: { cookie: `svc_session=${token}` } });
  const cleared = res.headers
    .getSetCookie()
    .some((c) => /^svc_session=;/.test(c) || /svc_session=.*Max-Age=0/i.test(c));
  return { status: res.status, location: res.headers.get('location'), cleared };
}

describe('web session: catch only what means "not signed in"', () => {
  it('a live session opens the dashboard; an ended one is "not signed in": the cookie is cleared, no error logged', async () => {
    const person = await seedOrg(ctx);
    expect(await dashboard(person.session)).toMatchObject({ status: 200, cleared: false });
    const error = vi.spyOn(ctx.log, 'error');
    try {
      await endSession(ctx, await principalFromToken(ctx, person.session));
      expect(await dashboard(person.session)).toEqual({
        status: 303,
        location: '/login?next=%2Fdashboard',
        cleared: true,
      });
      expect(error).not.toHaveBeenCalled();
    } finally {
      error.mockRestore();
    }
  });

  it('a failing database fails the request (500, logged) and keeps the cookie, which works again afterwards', async () => {
    const person = await seedOrg(ctx);
    const sqlite = ctx.sqlite!;
    const error = vi.spyOn(ctx.log, 'error');
    // Real SQLite errors on the session lookup ("no such table"), not a refusal of the token.
    sqlite.exec('ALTER TABLE sessions RENAME TO sessions_away');
    try {
      const broken = await dashboard(person.session);
      expect(broken).toMatchObject({ status: 500, cleared: false });
      expect(error).toHaveBeenCalledWith(
        'web session lookup failed',
        expect.objectContaining({ request_id: expect.stringMatching(/^req_/) }),
      );
    } finally {
      sqlite.exec('ALTER TABLE sessions_away RENAME TO sessions');
      error.mockRestore();
    }
    expect(await dashboard(person.session)).toMatchObject({ status: 200, cleared: false });
  });
});
