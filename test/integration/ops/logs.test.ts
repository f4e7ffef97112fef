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

describe('gateway access log', () => {
  it('is off by default and, with SVC_GATEWAY_ACCESS_LOG_SAMPLE=1, writes one line per call with its request id', async () => {
    const { makeWorld, gw } = await import('../gateway/fixture.js');
    const { startGateway } = await import('../../helpers/gateway.js');
    const { grantCredits, seedOrg } = await import('../../helpers/db.js');
    const w = await makeWorld();
    const consumer = await seedOrg(w.h);
    await grantCredits(w.h, consumer.orgId, 100);
    const all = await startGateway(w.dataDir, { SVC_LOG_LEVEL: 'info', SVC_GATEWAY_ACCESS_LOG_SAMPLE: '1' });
    const none = await startGateway(w.dataDir, { SVC_LOG_LEVEL: 'info' });
    try {
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await gw(all.url, 'GET', `/${w.slug}/users/${i}?token=do-not-log`, { key: consumer.key });
        expect(r.status).toBe(200);
        ids.push(r.headers.get('x-svc-request-id')!);
      }
      expect((await gw(none.url, 'GET', `/${w.slug}/users/9`, { key: consumer.key })).status).toBe(200);
      const calls = (p: typeof all) =>
        p
          .stderr()
          .split('\n')
          .filter((l) => l.includes('"msg":"call"'))
          .map((l) => JSON.parse(l) as Record<string, unknown>);
      for (let i = 0; i < 50 && calls(all).length < 3; i++) await new Promise((r) => setTimeout(r, 50));
      expect(calls(all).map((l) => l.request_id)).toEqual(ids);
      expect(calls(all)[0]).toMatchObject({ method: 'GET', listing: w.slug, status: 200, source: 'upstream' });
      expect(all.stderr()).not.toContain('do-not-log');
      expect(calls(none)).toEqual([]);
    } finally {
      await Promise.all([all.stop(), none.stop()]);
      await w.cleanup();
    }
  }, 60_000);
});
