/** GET /v1/me: who the credential belongs to, what it may do, and the org's balance. */
import type { AppContext } from '../context.js';
import { assertAuthenticated, type Principal } from '../auth/principal.js';
import { ALL_SCOPES } from '../../core/scopes.js';
import { getBalance } from '../ledger/ledger.service.js';
import type { Me } from '../../core/schemas/identity.schemas.js';

export async function describeMe(ctx: AppContext, caller: Principal | undefined): Promise<Me> {
  const p = assertAuthenticated(caller);
  const org = await ctx.db.selectFrom('orgs').selectAll().where('id', '=', p.orgId).executeTakeFirstOrThrow();
  const user = p.userId
    ? await ctx.db.selectFrom('users').selectAll().where('id', '=', p.userId).executeTakeFirst()
    : undefined;
  const balance = await getBalance(ctx.db, p.orgId);
  return {
    org: {
      id: org.id,
      name: org.name,
      status: org.status,
      origin: org.origin,
      email: org.email,
      email_verified: org.email_verified_at !== null,
      created_at: new Date(org.created_at).toISOString(),
    },
    user: user ? { id: user.id, email: user.email, name: user.name, role: user.role } : null,
    roles: user ? [user.role] : [],
    credential: {
      type: p.kind === 'key' ? ('api_key' as const) : ('session' as const),
      key_id: p.keyId,
      session_id: p.sessionId,
      scopes: ALL_SCOPES.filter((s) => p.scopes.has(s)),
    },
    balance: { credit_cents: balance.credit_cents, pending_cents: balance.pending_cents },
  };
}
