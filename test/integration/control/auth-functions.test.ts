/**
 * The plain auth functions (control/auth/principal.ts) without Hono, and the `next` step they put on errors,
 * which REST renders as its own paths. Runs the control plane in-process (createAppContext + app.request()).
 */
import { describe, expect, it } from 'vitest';
import { SvcError } from '../../../core/errors.js';
import {
  assertAuthenticated,
  assertOrgAdmin,
  assertScope,
  assertSession,
  principalFromToken,
} from '../../../control/auth/principal.js';
import { registerAnonymous } from '../../../control/orgs/orgs.service.js';
import { seedOrg } from '../../helpers/db.js';
import { useInProcessControl } from '../../helpers/in-process.js';

const control = useInProcessControl();

async function thrown(fn: () => unknown): Promise<SvcError> {
  try {
    await fn();
  } catch (e) {
    if (e instanceof SvcError) return e;
    throw e;
  }
  throw new Error('expected an SvcError');
}

describe('principalFromToken', () => {
  it('resolves an API key to its org and stored scopes, and a session to full scopes and a user', async () => {
    const { ctx } = control();
    const org = await seedOrg(ctx, { role: 'admin', scopes: ['catalog:read'] });
    const viaKey = await principalFromToken(ctx, org.key);
    expect(viaKey).toMatchObject({ kind: 'key', orgId: org.orgId, keyId: org.keyId, role: 'admin' });
    expect([...viaKey.scopes]).toEqual(['catalog:read']);
    const viaSession = await principalFromToken(ctx, org.session);
    expect(viaSession).toMatchObject({ kind: 'session', orgId: org.orgId, userId: org.userId, role: 'admin' });
    expect(viaSession.scopes.has('billing:write')).toBe(true);
  });

  it('refuses unknown credentials with next: authenticate, and unknown sessions with next: log_in', async () => {
    const { ctx } = control();
    const unknownKey = await thrown(() => principalFromToken(ctx, 'svc_live_' + 'x'.repeat(24)));
    expect([unknownKey.code, unknownKey.next]).toEqual(['unauthorized', { action: 'authenticate' }]);
    const unknownSession = await thrown(() => principalFromToken(ctx, 'sess_nope'));
    expect([unknownSession.code, unknownSession.next]).toEqual(['unauthorized', { action: 'log_in' }]);
  });
});

describe('assert* guards', () => {
  it('assertScope names verify_email as the next step for scopes email verification grants', async () => {
    const { ctx } = control();
    const reg = await registerAnonymous(ctx);
    const p = await principalFromToken(ctx, reg.api_key);
    expect(assertScope(p, 'keys:write')).toBe(p);
    const e = await thrown(() => assertScope(p, 'billing:write'));
    expect([e.code, e.next, e.extra]).toEqual([
      'insufficient_scope',
      { action: 'verify_email' },
      { required_scope: 'billing:write' },
    ]);
  });

  it('assertSession refuses keys (next: verify_email while the org has no email to sign in with); assertOrgAdmin refuses members without a role', async () => {
    const { ctx } = control();
    const reg = await registerAnonymous(ctx);
    const key = await principalFromToken(ctx, reg.api_key);
    const e = await thrown(() => assertSession(key));
    // A login would make another org: the key's org first needs a verified email (the next-step walker's finding).
    expect([e.code, e.next]).toEqual(['session_required', { action: 'verify_email' }]);
    const ofVerifiedOrg = { ...key, orgEmailVerified: true };
    const v = await thrown(() => assertSession(ofVerifiedOrg));
    expect([v.code, v.next]).toEqual(['session_required', { action: 'log_in' }]);
    const notAdmin = await thrown(() => assertOrgAdmin(key));
    expect([notAdmin.code, notAdmin.next]).toEqual(['forbidden', { action: 'ask_org_admin' }]);
    const none = await thrown(() => assertAuthenticated(undefined));
    expect([none.code, none.next]).toEqual(['unauthorized', { action: 'authenticate' }]);
  });
});

describe('REST renders next', () => {
  it('a problem body carries next and a detail naming the REST paths to take', async () => {
    const { ctx, call } = control();
    const reg = await registerAnonymous(ctx);
    const res = await call('POST', '/v1/billing/checkout', { token: reg.api_key, body: { pack: 'starter' } });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'insufficient_scope', next: { action: 'verify_email' } });
    expect(res.body.detail).toContain('POST /v1/auth/email');
    const anonymous = await call('GET', '/v1/keys');
    expect(anonymous.body).toMatchObject({ code: 'unauthorized', next: { action: 'authenticate' } });
    expect(anonymous.body.detail).toContain('Authorization: Bearer');
  });
});
