/**
 * The shared security checks every authenticated control route must pass: no credential -> 401,
 * wrong scope -> 403 insufficient_scope, revoked key -> 403 key_revoked, unknown key -> 401.
 */
import { describe, expect, it } from 'vitest';
import { call } from './http.js';
import { openTestDb, seedKey, seedOrg } from './db.js';
import { ALL_SCOPES, type Scope } from '../../core/scopes.js';
import type { ControlHarness } from './harness.js';

export interface GuardedRoute {
  method: string;
  path: string;
  scope: Scope;
  body?: unknown;
}

export function runAuthSuite(name: string, harness: () => ControlHarness, routes: GuardedRoute[]): void {
  describe(`${name}: auth`, () => {
    it.each(routes)('$method $path without a credential is 401 unauthorized', async (r) => {
      const res = await call(harness().control.url, r.method, r.path, { body: r.body });
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('unauthorized');
    });

    it.each(routes)('$method $path with an unknown key is 401', async (r) => {
      const res = await call(harness().control.url, r.method, r.path, {
        body: r.body,
        token: 'svc_live_' + 'x'.repeat(24),
      });
      expect(res.status).toBe(401);
    });

    it.each(routes)('$method $path without scope $scope is 403 insufficient_scope', async (r) => {
      const db = openTestDb(harness().dataDir);
      const org = await seedOrg(db);
      const { key } = await seedKey(db, org.orgId, { scopes: ALL_SCOPES.filter((s) => s !== r.scope) });
      await db.close();
      const res = await call(harness().control.url, r.method, r.path, { body: r.body, token: key });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('insufficient_scope');
    });

    it.each(routes)('$method $path with a revoked key is 403 key_revoked', async (r) => {
      const db = openTestDb(harness().dataDir);
      const org = await seedOrg(db);
      const { key, keyId } = await seedKey(db, org.orgId);
      await db.db.updateTable('api_keys').set({ revoked_at: Date.now() }).where('id', '=', keyId).execute();
      await db.close();
      const res = await call(harness().control.url, r.method, r.path, { body: r.body, token: key });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('key_revoked');
    });
  });
}
