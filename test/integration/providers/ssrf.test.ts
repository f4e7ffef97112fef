import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostname } from 'node:os';
import { lookup } from 'node:dns/promises';
import { startControl, type ControlHarness } from '../../helpers/harness.js';
import { call } from '../../helpers/http.js';
import { openTestDb, seedOrg, type SeededOrg } from '../../helpers/db.js';
import { serveDocuments, smallOpenApi, type LocalServer } from '../../helpers/catalog.js';
import type { DbHandles } from '../../../core/db/database.js';

let h: ControlHarness;
let db: DbHandles;
let docs: LocalServer;
let org: SeededOrg;

beforeAll(async () => {
  docs = await serveDocuments({ '/doc.json': smallOpenApi('Loopback Doc') });
  h = await startControl({ SVC_ENV: 'production', SVC_SMTP_URL: 'smtp://127.0.0.1:9' });
  db = openTestDb(h.dataDir);
  org = await seedOrg(db);
});
afterAll(async () => {
  await docs.close();
  await db.close();
  await h.stop();
});

describe('SSRF rule in production', () => {
  const port = () => new URL(docs.url).port;
  it.each([
    ['loopback IPv4', () => `http://127.0.0.1:${port()}/doc.json`],
    ['localhost name', () => `http://localhost:${port()}/doc.json`],
    ['link-local metadata address', () => 'http://169.254.169.254/latest/meta-data'],
    ['private 10/8', () => 'http://10.1.2.3/doc.json'],
    ['private 192.168/16', () => 'http://192.168.0.10/doc.json'],
    ['IPv6 loopback', () => `http://[::1]:${port()}/doc.json`],
    ['IPv4-mapped IPv6 loopback', () => `http://[::ffff:127.0.0.1]:${port()}/doc.json`],
    ['unspecified address', () => `http://0.0.0.0:${port()}/doc.json`],
  ])('refuses importing from %s and creates nothing', async (_n, url) => {
    const r = await call(h.control.url, 'POST', '/v1/provider/apis', { token: org.key, body: { openapi_url: url() } });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('url_not_allowed');
    const n = await db.db.selectFrom('apis').select(db.db.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    expect(Number(n.n)).toBe(0);
  });

  it('refuses a host name that resolves to a loopback address (checked at connect time)', async () => {
    const name = hostname();
    const addr = await lookup(name).catch(() => null);
    if (!addr || !/^127\.|^::1$/.test(addr.address)) return; // this machine's name is public: nothing to show
    const r = await call(h.control.url, 'POST', '/v1/provider/apis', {
      token: org.key,
      body: { openapi_url: `http://${name}:${port()}/doc.json` },
    });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('url_not_allowed');
  });

  it('refuses a private base_url on create and patch', async () => {
    const c = await call(h.control.url, 'POST', '/v1/provider/apis', {
      token: org.key,
      body: { body: smallOpenApi('Private Base'), base_url: 'http://127.0.0.1:8080' },
    });
    expect(c.status).toBe(400);
    expect(c.body.code).toBe('url_not_allowed');
    const ok = await call(h.control.url, 'POST', '/v1/provider/apis', {
      token: org.key,
      body: { body: smallOpenApi('Public Base'), base_url: 'https://api.example.com' },
    });
    expect(ok.status).toBe(201);
    const p = await call(h.control.url, 'PATCH', `/v1/provider/apis/${ok.body.api_id}`, {
      token: org.key,
      body: { base_url: 'http://[fe80::1]/' },
    });
    expect(p.status).toBe(400);
    expect(p.body.code).toBe('url_not_allowed');
  });

  it('refuses an http: website in production (https: only), storing nothing', async () => {
    const r = await call(h.control.url, 'PATCH', '/v1/provider/profile', {
      token: org.key,
      body: { website: 'http://example.com' },
    });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('validation_failed');
    expect(r.body.errors).toEqual([{ path: 'website', message: 'must be an https: URL' }]);
    const row = await db.db.selectFrom('providers').select('website').executeTakeFirst();
    expect(row?.website ?? null).toBeNull();
  });
});
