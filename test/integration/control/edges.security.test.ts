/**
 * The control plane's edges: publicly served links, upstream credentials, malformed Authorization, and the answers
 * for requests too large for the app (413) or for Node's parser (431). Each refusal is problem+json and stores nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { startControl, type ControlHarness } from '../../helpers/harness.js';
import { call } from '../../helpers/http.js';
import { openTestDb, seedOrg, type SeededOrg } from '../../helpers/db.js';
import { smallOpenApi } from '../../helpers/catalog.js';
import type { DbHandles } from '../../../core/db/database.js';

let h: ControlHarness;
let db: DbHandles;
let org: SeededOrg;
let apiId: string;

beforeAll(async () => {
  h = await startControl();
  db = openTestDb(h.dataDir);
  org = await seedOrg(db);
  const r = await call(h.control.url, 'POST', '/v1/provider/apis', {
    token: org.key,
    body: { body: smallOpenApi('Edge Api'), base_url: 'https://api.example.com' },
  });
  expect(r.status).toBe(201);
  apiId = r.body.api_id;
});
afterAll(async () => {
  await db.close();
  await h.stop();
});

const BAD_LINKS = [
  ['javascript:', 'javascript:alert(1)'],
  ['file:', 'file:///etc/passwd'],
  ['data:', 'data:text/html,<script>alert(1)</script>'],
  ['CR/LF', 'https://example.com/\r\nSet-Cookie: a=b'],
  ['a tab', 'https://exa\tmple.com/'],
  ['user-info', 'https://trusted.example@evil.example/'],
  ['user:password', 'https://user:pw@example.com/'],
] as const;

describe('publicly served links accept https: (http: in development) only, without control characters', () => {
  it.each(BAD_LINKS)('provider profile refuses a %s website/logo_url and stores nothing', async (_n, bad) => {
    for (const field of ['website', 'logo_url']) {
      const r = await call(h.control.url, 'PATCH', '/v1/provider/profile', { token: org.key, body: { [field]: bad } });
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('validation_failed');
      expect(r.body.errors).toEqual([{ path: field, message: expect.any(String) }]);
    }
    const row = await db.db.selectFrom('providers').select(['website', 'logo_url']).executeTakeFirst();
    expect([row?.website ?? null, row?.logo_url ?? null]).toEqual([null, null]);
  });

  it.each(BAD_LINKS)('listing create and patch refuse a %s docs_url/logo_url', async (_n, bad) => {
    for (const field of ['docs_url', 'logo_url']) {
      const p = await call(h.control.url, 'PATCH', `/v1/provider/apis/${apiId}`, {
        token: org.key,
        body: { [field]: bad },
      });
      expect(p.status).toBe(400);
      expect(p.body.code).toBe('validation_failed');
      expect(p.body.errors).toEqual([{ path: field, message: expect.any(String) }]);
      const c = await call(h.control.url, 'POST', '/v1/provider/apis', {
        token: org.key,
        body: { body: smallOpenApi(`Bad ${field}`), [field]: bad },
      });
      expect(c.status).toBe(400);
      expect(c.body.code).toBe('validation_failed');
    }
    const rows = await db.db.selectFrom('apis').select(['docs_url', 'logo_url']).execute();
    expect(rows).toEqual([{ docs_url: null, logo_url: null }]);
  });

  it('accepts https: links (and http: in development)', async () => {
    const r = await call(h.control.url, 'PATCH', '/v1/provider/profile', {
      token: org.key,
      body: { website: 'https://example.com', logo_url: 'http://127.0.0.1:4010/logo.png' },
    });
    expect(r.status).toBe(200);
    expect(r.body.website).toBe('https://example.com');
  });
});

describe('PUT credentials refuses secrets and header names the gateway cannot inject safely', () => {
  it.each([
    ['a secret with CR/LF', { secret: 'abc\r\nX-Evil: 1' }, 'secret'],
    ['a secret with NUL', { secret: 'abc\u0000def' }, 'secret'],
    ['header injection as Host', { secret: 's', injection: 'header', injection_name: 'Host' }, 'injection_name'],
    [
      'header injection as Transfer-Encoding',
      { secret: 's', injection: 'header', injection_name: 'Transfer-Encoding' },
      'injection_name',
    ],
    [
      'header injection as Content-Length',
      { secret: 's', injection: 'header', injection_name: 'content-length' },
      'injection_name',
    ],
    [
      'header injection as X-Svc-…',
      { secret: 's', injection: 'header', injection_name: 'X-Svc-Key' },
      'injection_name',
    ],
  ])('refuses %s with validation_failed and stores nothing', async (_n, body, path) => {
    const r = await call(h.control.url, 'PUT', `/v1/provider/apis/${apiId}/credentials`, { token: org.key, body });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('validation_failed');
    expect(r.body.errors).toEqual([{ path, message: expect.any(String) }]);
    const row = await db.db.selectFrom('apis').select(['secret_enc']).where('id', '=', apiId).executeTakeFirst();
    expect(row?.secret_enc).toBeNull();
  });

  it('accepts an ordinary header injection', async () => {
    const r = await call(h.control.url, 'PUT', `/v1/provider/apis/${apiId}/credentials`, {
      token: org.key,
      body: { secret: 'tok-123', injection: 'header', injection_name: 'X-Api-Key' },
    });
    expect(r.status).toBeLessThan(300);
  });
});

describe('a sent credential must be valid, even on public routes', () => {
  it.each(['Bearer a b', 'Basic dXNlcjpwdw==', 'Bearer', 'Bearer ', 'Token abc'])(
    '%j on the public catalog is 401 unauthorized, not anonymous',
    async (authorization) => {
      const r = await call(h.control.url, 'GET', '/v1/catalog/search?q=x', { headers: { authorization } });
      expect(r.status).toBe(401);
      expect(r.body.code).toBe('unauthorized');
    },
  );

  it('no Authorization header stays anonymous on the public catalog', async () => {
    expect((await call(h.control.url, 'GET', '/v1/catalog/search?q=x')).status).toBe(200);
  });
});

function rawExchange(bytes: string): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(h.control.port, '127.0.0.1');
    let text = '';
    s.setEncoding('utf8');
    s.on('data', (d: string) => {
      text += d;
    });
    s.on('close', () => resolve(text));
    s.on('error', () => resolve(text));
    s.setTimeout(5000, () => s.destroy());
    s.on('connect', () => s.write(bytes));
  });
}

describe('answers for requests too large for the app or the parser', () => {
  it('413 is problem+json with Connection: close', async () => {
    const text = await rawExchange(
      `POST /v1/provider/apis HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${org.key}\r\nContent-Type: application/json\r\nContent-Length: ${6 * 1024 * 1024}\r\n\r\n{}`,
    );
    const head = text.slice(0, text.indexOf('\r\n\r\n')).toLowerCase();
    expect(head.split('\r\n')[0]).toBe('http/1.1 413 payload too large');
    expect(head).toContain('connection: close');
    expect(head).not.toContain('keep-alive');
    expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)).code).toBe('payload_too_large');
  });

  it('431 (headers over the parser limit) is problem+json with a request id, then close', async () => {
    const text = await rawExchange(
      `GET /v1/catalog/search HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`,
    );
    const [head = '', body = ''] = text.split('\r\n\r\n');
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 431 Request Header Fields Too Large');
    expect(head.toLowerCase()).toContain('content-type: application/problem+json');
    expect(head.toLowerCase()).toContain('connection: close');
    const p = JSON.parse(body);
    expect(p).toMatchObject({ status: 431, code: 'headers_too_large' });
    expect(p.request_id).toMatch(/^req_/);
  });

  it('conflicting Content-Length values are a 400 problem, then close', async () => {
    const text = await rawExchange(
      'POST /v1/catalog/search HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 5\r\n\r\nabcde',
    );
    expect(text.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
    expect(JSON.parse(text.split('\r\n\r\n')[1] ?? '').code).toBe('validation_failed');
  });

  it('a malformed request line is a 400 problem, then close', async () => {
    const text = await rawExchange('GARBAGE\r\n\r\n');
    expect(text.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
    expect(JSON.parse(text.split('\r\n\r\n')[1] ?? '').code).toBe('validation_failed');
  });
});
