/**
 * The auth suite over every route the OpenAPI document marks as needing a credential (`security`), generated from
 * the document itself, so a new route is covered the moment it is documented. Scope checks stay per route in
 * test/helpers/auth-suite.ts (the document does not name scopes). In-process: createAppContext + app.request().
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { seedKey, seedOrg } from '../../helpers/db.js';
import { useInProcessControl } from '../../helpers/in-process.js';

const control = useInProcessControl();

interface Operation {
  method: string;
  path: string;
}

let secured: Operation[] = [];
let revokedKey = '';

beforeAll(async () => {
  const { ctx, call } = control();
  const doc = (await call('GET', '/v1/openapi.json')).body as {
    paths: Record<string, Record<string, { security?: unknown[] }>>;
  };
  secured = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([, op]) => Array.isArray(op.security) && op.security.length > 0)
      // Path parameters get a placeholder: auth is decided before the resource is looked up.
      .map(([method, op]) => ({ method: method.toUpperCase(), path: path.replace(/\{[^}]+\}/g, 'x'), op }))
      .map(({ method, path: p }) => ({ method, path: p })),
  );
  const org = await seedOrg(ctx);
  const { key, keyId } = await seedKey(ctx, org.orgId);
  await ctx.db.updateTable('api_keys').set({ revoked_at: Date.now() }).where('id', '=', keyId).execute();
  revokedKey = key;
});

describe('every route the OpenAPI document marks as needing a credential', () => {
  it('is a real list (the document marks the authenticated routes)', () => {
    expect(secured.length).toBeGreaterThan(30);
    expect(secured).toContainEqual({ method: 'POST', path: '/v1/keys' });
  });

  it('without a credential is 401 unauthorized (before its input is validated)', async () => {
    const { call } = control();
    const wrong: string[] = [];
    for (const op of secured) {
      const res = await call(op.method, op.path);
      if (res.status !== 401 || res.body.code !== 'unauthorized') wrong.push(`${op.method} ${op.path}: ${res.status}`);
    }
    expect(wrong).toEqual([]);
  });

  it('with an unknown key is 401 unauthorized', async () => {
    const { call } = control();
    const wrong: string[] = [];
    for (const op of secured) {
      const res = await call(op.method, op.path, { token: 'svc_live_' + 'x'.repeat(24) });
      if (res.status !== 401 || res.body.code !== 'unauthorized') wrong.push(`${op.method} ${op.path}: ${res.status}`);
    }
    expect(wrong).toEqual([]);
  });

  it('with a revoked key is 403 key_revoked', async () => {
    const { call } = control();
    const wrong: string[] = [];
    for (const op of secured) {
      const res = await call(op.method, op.path, { token: revokedKey });
      if (res.status !== 403 || res.body.code !== 'key_revoked') wrong.push(`${op.method} ${op.path}: ${res.status}`);
    }
    expect(wrong).toEqual([]);
  });
});
