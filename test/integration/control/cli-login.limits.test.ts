import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlHarness, startControl } from '../../helpers/harness.js';
import { call } from '../../helpers/http.js';

/** POST /v1/auth/cli/device needs no credential, so it spends the per-address login budget (10 x the per-email one). */
describe('CLI device sign-in limits', () => {
  let h: ControlHarness;
  beforeAll(async () => {
    h = await startControl({ SVC_LOGIN_RATE_PER_HOUR: '1' });
  });
  afterAll(() => h?.stop());

  it('answers 429 rate_limited with Retry-After once an address started too many', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await call(h.control.url, 'POST', '/v1/auth/cli/device')).status);
    expect(statuses.every((s) => s === 201)).toBe(true);
    const over = await call(h.control.url, 'POST', '/v1/auth/cli/device');
    expect(over.status).toBe(429);
    expect(over.body.code).toBe('rate_limited');
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('refuses a token request that mixes or lacks the two flows, and an unknown device code', async () => {
    const none = await call(h.control.url, 'POST', '/v1/auth/cli/token', { body: {} });
    expect(none.body.code).toBe('validation_failed');
    const unknown = await call(h.control.url, 'POST', '/v1/auth/cli/token', { body: { device_code: 'cld_nope' } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.code).toBe('invalid_grant');
  });
});
