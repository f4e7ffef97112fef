/**
 * Key authentication, the first step of every metered call: a plain function over the in-memory KeyCache,
 * so the bench can time it alone. No database read unless the key's hash is not cached yet.
 */
import { hash } from 'node:crypto';
import { bearerToken, isApiKeyFormat, isSessionTokenFormat } from '../../core/key-format.js';
import type { ErrorCode } from '../../core/errors.js';
import type { KeyCache, KeyRecord, OrgRecord } from '../cache/key-cache.js';

export type AuthOutcome = { ok: true; key: KeyRecord; org: OrgRecord } | { ok: false; code: ErrorCode; detail: string };

/** The SHA-256 the KeyCache is keyed by, when the call carries an svc API key at all (else null). */
export function keyHashOf(authorization: string, xSvcKey: string): string | null {
  const token = xSvcKey || bearerToken(authorization) || '';
  return token && isApiKeyFormat(token) ? hash('sha256', token, 'hex') : null;
}

/**
 * @param authorization the raw `Authorization` header ('' when absent, as uWS returns it)
 * @param xSvcKey the raw `X-Svc-Key` header ('' when absent)
 */
export function authenticate(authorization: string, xSvcKey: string, keys: KeyCache): AuthOutcome {
  const token = xSvcKey || bearerToken(authorization) || '';
  if (!token)
    return {
      ok: false,
      code: 'unauthorized',
      detail: 'Send your API key as `Authorization: Bearer svc_live_…` or `X-Svc-Key`.',
    };
  if (!isApiKeyFormat(token)) {
    if (isSessionTokenFormat(token)) {
      return {
        ok: false,
        code: 'api_key_required',
        detail: 'Session tokens are not accepted on the gateway; call it with an API key (svc_live_…).',
      };
    }
    return { ok: false, code: 'unauthorized', detail: 'The credential is not an svc API key.' };
  }
  const key = keys.byHash(hash('sha256', token, 'hex'));
  if (!key) return { ok: false, code: 'unauthorized', detail: 'Unknown API key.' };
  if (key.revoked)
    return {
      ok: false,
      code: 'key_revoked',
      detail: 'This API key was revoked; create a new one with `svc keys create`.',
    };
  if (!key.canCall) return { ok: false, code: 'insufficient_scope', detail: 'This key lacks the proxy:call scope.' };
  const org = keys.org(key.orgId);
  if (org.suspended) return { ok: false, code: 'org_suspended', detail: 'The organization of this key is suspended.' };
  return { ok: true, key, org };
}
