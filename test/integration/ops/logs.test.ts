/** Logs an operator can follow: one JSON line per control-plane request, with its request id, never the query. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControl, type ControlHarness } from '../../helpers/harness.js';

let h: ControlHarness;
beforeAll(async () => {
  h = await startControl({ SVC_LOG_LEVEL: 'info' });
});
afterAll(() => h?.stop());

function lines(): Record<string, unknown>[] {
  return h.control
    .stderr()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('access log', () => {
  it('writes one line per request with the request id the client got, the route template, status and time', async () => {
    const res = await fetch(`${h.control.url}/v1/apis/no-such-listing?code=123456&token=sess_secret`);
    const requestId = res.headers.get('x-svc-request-id');
    expect(res.status).toBe(404);
    let line: Record<string, unknown> | undefined;
    for (let i = 0; i < 50 && !line; i++) {
      line = lines().find((l) => l.msg === 'request' && l.request_id === requestId);
      if (!line) await new Promise((r) => setTimeout(r, 50));
    }
    expect(line).toMatchObject({ lvl: 'info', proc: 'control', method: 'GET', route: '/v1/apis/:slug', status: 404 });
    expect(typeof line!.ms).toBe('number');
    expect(h.control.stderr()).not.toContain('123456');
    expect(h.control.stderr()).not.toContain('sess_secret');
  });

  it('at SVC_LOG_LEVEL=warn, requests are not logged', async () => {
    const quiet = await startControl({ SVC_LOG_LEVEL: 'warn' });
    try {
      await fetch(`${quiet.control.url}/healthz`);
      await new Promise((r) => setTimeout(r, 100));
      expect(quiet.control.stderr()).not.toContain('"msg":"request"');
    } finally {
      await quiet.stop();
    }
  });
});
