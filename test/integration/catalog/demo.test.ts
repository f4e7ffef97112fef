import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baseEnv, startProcess, tempDataDir, type RunningProcess } from '../../helpers/processes.js';
import { call } from '../../helpers/http.js';
import { openTestDb } from '../../helpers/db.js';
import { DEMO_UPSTREAM_SECRET } from '../../../demo/demo-api.js';

let upstream: RunningProcess;
let data: { dir: string; cleanup: () => void };
let env: Record<string, string>;

beforeAll(async () => {
  data = tempDataDir();
  upstream = await startProcess('demo-upstream', 'demo/upstream.js', baseEnv(data.dir));
  env = baseEnv(data.dir, { SVC_DEMO: 'true', SVC_DEMO_UPSTREAM_PORT: String(upstream.port) });
});
afterAll(async () => {
  await upstream.stop();
  data.cleanup();
});

describe('demo listing', () => {
  it('the demo upstream answers deterministically behind its bearer secret', async () => {
    const auth = { authorization: `Bearer ${DEMO_UPSTREAM_SECRET}` };
    const a = await call(upstream.url, 'GET', '/current?city=paris', { headers: auth });
    const b = await call(upstream.url, 'GET', '/current?city=paris', { headers: auth });
    expect(a.status).toBe(200);
    expect(a.body).toEqual(b.body);
    expect((await call(upstream.url, 'GET', '/current?city=paris')).status).toBe(401);
    expect((await call(upstream.url, 'GET', '/current', { headers: auth })).status).toBe(400);
    const s = await call(upstream.url, 'POST', '/sentiment', {
      headers: auth,
      body: { text: 'I love this great API' },
    });
    expect(s.body).toEqual({ score: 2, label: 'positive' });
  });

  it('knows the README city (lisbon) and answers HEAD like GET without a body', async () => {
    const auth = { authorization: `Bearer ${DEMO_UPSTREAM_SECRET}` };
    const lisbon = await call(upstream.url, 'GET', '/cities/lisbon', { headers: auth });
    expect(lisbon.status).toBe(200);
    expect(lisbon.body).toMatchObject({ city: 'lisbon', country: 'PT' });
    const head = await fetch(`${upstream.url}/current?city=lisbon`, { method: 'HEAD', headers: auth });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('application/json');
    expect(await head.text()).toBe('');
  });

  it('production seeds the demo only when asked, past the SSRF guard, and starts either way', async () => {
    const prod = {
      SVC_ENV: 'production',
      SVC_SMTP_URL: 'smtp://127.0.0.1:9',
      SVC_DEMO_UPSTREAM_PORT: String(upstream.port),
    };
    const off = tempDataDir();
    const { SVC_DEMO: _unset, ...defaults } = baseEnv(off.dir, prod);
    const plain = await startProcess('control', 'control/main.js', defaults);
    try {
      expect((await call(plain.url, 'GET', '/v1/apis/demo-weather')).status).toBe(404);
    } finally {
      await plain.stop();
      off.cleanup();
    }
    const on = tempDataDir();
    const withDemo = await startProcess('control', 'control/main.js', baseEnv(on.dir, { ...prod, SVC_DEMO: 'true' }));
    try {
      const d = await call(withDemo.url, 'GET', '/v1/apis/demo-weather');
      expect(d.status).toBe(200);
    } finally {
      await withDemo.stop();
      on.cleanup();
    }
  });

  it('a fresh data dir lists demo-weather with free and paid endpoints, once, across restarts', async () => {
    for (let run = 0; run < 2; run++) {
      const control = await startProcess('control', 'control/main.js', env);
      try {
        const s = await call(control.url, 'GET', '/v1/catalog/search?query=weather');
        expect(s.status).toBe(200);
        expect(s.body.data.map((d: { slug: string }) => d.slug)).toEqual(['demo-weather']);
        const d = await call(control.url, 'GET', '/v1/apis/demo-weather');
        expect(d.body.free_endpoints).toBeGreaterThan(0);
        expect(d.body.max_price_cents).toBeGreaterThan(0);
        expect(d.body.provider.slug).toBe('svc-demo');
        const o = await call(control.url, 'GET', '/v1/apis/demo-weather/openapi');
        expect(o.body.info.title).toBe('Demo Weather');
      } finally {
        await control.stop();
      }
    }
    const h = openTestDb(data.dir);
    const apis = await h.db.selectFrom('apis').select(['base_url', 'secret_enc', 'status']).execute();
    await h.close();
    expect(apis).toHaveLength(1);
    expect(apis[0]).toMatchObject({ base_url: upstream.url, status: 'live' });
    expect(apis[0]!.secret_enc).toMatch(/^v1:/);
  });
});
