import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import {
  makeWorld,
  gw,
  balanceOf,
  keySpentOf,
  feedApplied,
  until,
  clearOfUtcMidnight,
  activateRequiredTerms,
  retireTerms,
  type World,
} from './fixture.js';
import { EXPECTED_SERVER, startGateway, type RunningGateway } from '../../helpers/gateway.js';
import { seedOrg, seedKey, grantCredits, seedListing, expectLedgerConsistent } from '../../helpers/db.js';
import { recordChange } from '../../../core/db/changes.js';
import { newId } from '../../../core/ids.js';

let w: World;
let g: RunningGateway;

beforeAll(async () => {
  w = await makeWorld();
  g = await startGateway(w.dataDir, { SVC_GATEWAY_MAX_REQUEST_BYTES: '1024', SVC_GATEWAY_MAX_HEADER_BYTES: '8192' });
});
afterAll(async () => {
  await g?.stop();
  await w?.cleanup();
});

async function paidOrg(cents = 100) {
  const c = await seedOrg(w.h);
  if (cents) await grantCredits(w.h, c.orgId, cents);
  return c;
}

function expectProblem(r: Awaited<ReturnType<typeof gw>>, status: number, code: string) {
  expect(r.status).toBe(status);
  expect(r.code).toBe(code);
  expect(r.headers.get('content-type')).toBe('application/problem+json');
  expect(r.json).toMatchObject({ status, code, type: `https://svc.dev/errors/${code}` });
  expect(r.headers.get('x-svc-request-id')).toBe(r.json!.request_id);
}

describe('gateway refusals (problem+json, stable codes, nothing charged)', () => {
  it('401 unauthorized without a key, and for an unknown key', async () => {
    expectProblem(await gw(g.url, 'GET', `/${w.slug}/users/1`), 401, 'unauthorized');
    expectProblem(
      await gw(g.url, 'GET', `/${w.slug}/users/1`, { key: 'svc_live_' + 'A'.repeat(24) }),
      401,
      'unauthorized',
    );
  });

  it('401 api_key_required for a session token; X-Svc-Key works like Authorization', async () => {
    const c = await paidOrg();
    expectProblem(await gw(g.url, 'GET', `/${w.slug}/users/1`, { key: c.session }), 401, 'api_key_required');
    const r = await gw(g.url, 'GET', `/${w.slug}/users/1`, { headers: { 'x-svc-key': c.key } });
    expect(r.status).toBe(200);
  });

  it('403 key_revoked within 1 second of a revoke by another process', async () => {
    const c = await paidOrg();
    expect((await gw(g.url, 'GET', `/${w.slug}/users/1`, { key: c.key })).status).toBe(200);
    await w.h.db.transaction().execute(async (trx) => {
      await trx.updateTable('api_keys').set({ revoked_at: Date.now() }).where('id', '=', c.keyId).execute();
      await recordChange(trx, 'key', c.keyId, Date.now());
    });
    // Judged by a call sent after the 1 s bound: one sent just before it may still be served from the old cache,
    // and under CI load its answer can arrive after the bound (the old loop then failed a gateway that met it).
    let r!: Awaited<ReturnType<typeof gw>>;
    await until(async () => {
      r = await gw(g.url, 'GET', `/${w.slug}/users/1`, { key: c.key });
      return r.status !== 200;
    }, 1000);
    expectProblem(r, 403, 'key_revoked');
  });

  it('403 insufficient_scope without proxy:call', async () => {
    const c = await paidOrg();
    const k = await seedKey(w.h, c.orgId, { scopes: ['catalog:read'] });
    expectProblem(await gw(g.url, 'GET', `/${w.slug}/users/1`, { key: k.key }), 403, 'insufficient_scope');
  });

  it('403 free_only_key on a paid endpoint; the free endpoint still works', async () => {
    const c = await paidOrg();
    const k = await seedKey(w.h, c.orgId, { approvalMode: 'free_only' });
    expectProblem(await gw(g.url, 'GET', `/${w.slug}/users/1`, { key: k.key }), 403, 'free_only_key');
    expect((await gw(g.url, 'GET', `/${w.slug}/free`, { key: k.key })).status).toBe(200);
  });

  it('403 org_suspended', async () => {
    const c = await paidOrg();
    await w.h.db.transaction().execute(async (trx) => {
      await trx.updateTable('orgs').set({ status: 'suspended' }).where('id', '=', c.orgId).execute();
      await recordChange(trx, 'org', c.orgId, Date.now());
    });
    expectProblem(await gw(g.url, 'GET', `/${w.slug}/users/1`, { key: c.key }), 403, 'org_suspended');
  });

  it('402 insufficient_credits for a bare org says how to pay or verify', async () => {
    const c = await seedOrg(w.h);
    await w.h.db.updateTable('orgs').set({ email_verified_at: null }).where('id', '=', c.orgId).execute();
    const r = await gw(g.url, 'GET', `/${w.slug}/users/1`, { key: c.key });
    expectProblem(r, 402, 'insufficient_credits');
    expect(r.json!.detail).toMatch(/verify/i);
    expect(r.json!.detail).toMatch(/buy credits/i);
    expect(r.json).toMatchObject({ price_cents: 3, available_cents: 0 });
  });

  it('402 per_call_cap_exceeded, budget_exceeded and daily_cap_exceeded, each distinct', async () => {
    await clearOfUtcMidnight(); // the daily cap's third call must fall on the same UTC day as the first two
    const c = await paidOrg(1000);
    const perCall = await seedKey(w.h, c.orgId, { perCallMaxCents: 2 });
    expectProblem(await gw(g.url, 'GET', `/${w.slug}/users/1`, { key: perCall.key }), 402, 'per_call_cap_exceeded');
    expect((await gw(g.url, 'POST', `/${w.slug}/echo`, { key: perCall.key, body: 'x' })).status).toBe(200);

    const budget = await seedKey(w.h, c.orgId, { budgetCents: 7 });
    expect((await gw(g.url, 'GET', `/${w.slug}/users/1`, { key: budget.key })).status).toBe(200);
    expect((await gw(g.url, 'GET', `/${w.slug}/users/2`, { key: budget.key })).status).toBe(200);
    expectProblem(await gw(g.url, 'GET', `/${w.slug}/users/3`, { key: budget.key }), 402, 'budget_exceeded');
    expect((await gw(g.url, 'GET', `/${w.slug}/teapot`, { key: budget.key })).status).toBe(418);

    const daily = await seedKey(w.h, c.orgId, { dailyCapCents: 4 });
    expect((await gw(g.url, 'POST', `/${w.slug}/echo`, { key: daily.key, body: 'a' })).status).toBe(200);
    expect((await gw(g.url, 'POST', `/${w.slug}/echo`, { key: daily.key, body: 'b' })).status).toBe(200);
    expectProblem(await gw(g.url, 'POST', `/${w.slug}/echo`, { key: daily.key, body: 'c' }), 402, 'daily_cap_exceeded');
    const spent = await Promise.all(
      [perCall.keyId, budget.keyId, daily.keyId].map(async (id) => [id, await keySpentOf(w.h, id)] as const),
    );
    expect(Object.fromEntries(spent)).toEqual({
      [perCall.keyId]: 2,
      [budget.keyId]: 7,
      [daily.keyId]: 4,
    });
    expect((await balanceOf(w.h, c.orgId)).credit_cents).toBe(1000 - 13);
    await expectLedgerConsistent(w.h);
  });

  it('402 price_above_max when X-Svc-Max-Price-Cents is below the current price; nothing charged', async () => {
    const c = await paidOrg(10);
    expectProblem(
      await gw(g.url, 'GET', `/${w.slug}/users/1`, { key: c.key, headers: { 'x-svc-max-price-cents': '2' } }),
      402,
      'price_above_max',
    );
    expect(
      (await gw(g.url, 'GET', `/${w.slug}/users/1`, { key: c.key, headers: { 'x-svc-max-price-cents': '3' } })).status,
    ).toBe(200);
    expect((await balanceOf(w.h, c.orgId)).credit_cents).toBe(7);
  });

  it('404 listing_not_found for an unknown slug or a draft listing; endpoint_not_found for an unknown path', async () => {
    const c = await paidOrg();
    expectProblem(await gw(g.url, 'GET', '/no-such-api/users/1', { key: c.key }), 404, 'listing_not_found');
    const draft = await seedListing(w.h, {
      orgId: w.provider.orgId,
      slug: `draft-${newId('api').slice(-6)}`,
      baseUrl: w.upstream.url,
      endpoints: [{ method: 'GET', path: '/x', priceCents: 0 }],
      status: 'draft',
    });
    const slug = (
      await w.h.db.selectFrom('apis').select('slug').where('id', '=', draft.apiId).executeTakeFirstOrThrow()
    ).slug;
    expectProblem(await gw(g.url, 'GET', `/${slug}/x`, { key: c.key }), 404, 'listing_not_found');
    expectProblem(await gw(g.url, 'GET', `/${w.slug}/nope`, { key: c.key }), 404, 'endpoint_not_found');
    expectProblem(await gw(g.url, 'DELETE', `/${w.slug}/users/1`, { key: c.key }), 404, 'endpoint_not_found');
  });

  it('428 terms_not_accepted until the org accepts the active required document', async () => {
    const c = await paidOrg();
    const docId = await activateRequiredTerms(w, g.url);
    const r = await gw(g.url, 'GET', `/${w.slug}/users/1`, { key: c.key });
    expectProblem(r, 428, 'terms_not_accepted');
    expect(r.json).toMatchObject({ document_id: docId });
    await w.h.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('terms_acceptances')
        .values({
          id: newId('acc'),
          org_id: c.orgId,
          api_id: w.apiId,
          document_id: docId,
          user_id: c.userId,
          accepted_at: Date.now(),
        })
        .execute();
      await recordChange(trx, 'terms', w.apiId, Date.now());
    });
    await feedApplied(w.h, g.url);
    expect((await gw(g.url, 'GET', `/${w.slug}/users/1`, { key: c.key })).status).toBe(200);
    // Other orgs stay blocked until they accept; then the document is retired so later tests are unaffected.
    await retireTerms(w, g.url, docId);
  });

  it('429 rate_limited with Retry-After when the key exceeds rate_limit_per_min', async () => {
    const c = await paidOrg();
    await w.h.db.transaction().execute(async (trx) => {
      await trx.updateTable('api_keys').set({ rate_limit_per_min: 2 }).where('id', '=', c.keyId).execute();
      await recordChange(trx, 'key', c.keyId, Date.now());
    });
    await feedApplied(w.h, g.url);
    expect((await gw(g.url, 'GET', `/${w.slug}/free`, { key: c.key })).status).toBe(200);
    expect((await gw(g.url, 'GET', `/${w.slug}/free`, { key: c.key })).status).toBe(200);
    const r = await gw(g.url, 'GET', `/${w.slug}/free`, { key: c.key });
    expectProblem(r, 429, 'rate_limited');
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('502 upstream_error when the upstream is unreachable; not charged', async () => {
    const c = await paidOrg(10);
    const dead = await seedListing(w.h, {
      orgId: w.provider.orgId,
      slug: `dead-${newId('api').slice(-6)}`,
      baseUrl: 'http://127.0.0.1:1',
      endpoints: [{ method: 'GET', path: '/x', priceCents: 4 }],
    });
    const slug = (await w.h.db.selectFrom('apis').select('slug').where('id', '=', dead.apiId).executeTakeFirstOrThrow())
      .slug;
    const r = await gw(g.url, 'GET', `/${slug}/x`, { key: c.key });
    expectProblem(r, 502, 'upstream_error');
    expect(r.headers.get('x-svc-charged-cents')).toBe('0');
    expect((await balanceOf(w.h, c.orgId)).credit_cents).toBe(10);
    await expectLedgerConsistent(w.h);
  });

  it('413 payload_too_large for a body over the limit', async () => {
    const c = await paidOrg(10);
    expectProblem(
      await gw(g.url, 'POST', `/${w.slug}/echo`, { key: c.key, body: 'x'.repeat(4096) }),
      413,
      'payload_too_large',
    );
    // Chunked (no Content-Length): the limit is enforced while streaming.
    const chunks = new ReadableStream<Uint8Array>({
      start(ctl) {
        for (let i = 0; i < 8; i++) ctl.enqueue(new TextEncoder().encode('x'.repeat(1000)));
        ctl.close();
      },
    });
    const res = await fetch(`${g.url}/${w.slug}/echo`, {
      method: 'POST',
      headers: { authorization: `Bearer ${c.key}` },
      body: chunks,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { code: string }).code).toBe('payload_too_large');
    expect((await balanceOf(w.h, c.orgId)).credit_cents).toBe(10);
  });

  // Clients such as fetch and curl write the whole body before they read: answering 413 and closing while they
  // still write turns our answer into EPIPE on their side. The gateway reads and drops the excess (up to 1 MiB),
  // then answers and keeps the connection open; a body far past that is answered at once and the socket closed.
  it('413 waits for the rest of an oversized body, then answers on a connection that stays open', async () => {
    const c = await paidOrg(10);
    const opened = (head: string) => {
      const s = connect(g.port, '127.0.0.1');
      let buf = '';
      s.setEncoding('utf8');
      s.on('data', (d: string) => {
        buf += d;
      });
      s.on('error', () => {});
      s.write(head);
      return { s, text: () => buf };
    };
    const later = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const auth = `Host: x\r\nAuthorization: Bearer ${c.key}\r\n`;
    for (const framing of ['chunked', 'length'] as const) {
      const chunk = 'x'.repeat(1500); // over the 1024-byte limit on its own
      const conn =
        framing === 'chunked'
          ? opened(`POST /${w.slug}/echo HTTP/1.1\r\n${auth}Transfer-Encoding: chunked\r\n\r\n`)
          : opened(`POST /${w.slug}/echo HTTP/1.1\r\n${auth}Content-Length: 3000\r\n\r\n`);
      conn.s.write(framing === 'chunked' ? `${(1500).toString(16)}\r\n${chunk}\r\n` : chunk);
      await later(300);
      expect(conn.text(), `${framing}: no answer while the body is still coming`).toBe('');
      conn.s.write(framing === 'chunked' ? `${(1500).toString(16)}\r\n${chunk}\r\n0\r\n\r\n` : chunk);
      await expect.poll(conn.text, { timeout: 3000 }).toContain('\r\n\r\n');
      expect(conn.text().split('\r\n')[0]).toBe('HTTP/1.1 413 Payload Too Large');
      expect(conn.text().toLowerCase()).not.toContain('connection: close');
      expect(conn.s.destroyed || conn.s.readyState !== 'open').toBe(false);
      conn.s.destroy();
    }
    const huge = opened(`POST /${w.slug}/echo HTTP/1.1\r\n${auth}Content-Length: ${4 * 1024 * 1024}\r\n\r\n`);
    await expect.poll(huge.text, { timeout: 3000 }).toContain('\r\n\r\n');
    expect(huge.text().split('\r\n')[0]).toBe('HTTP/1.1 413 Payload Too Large');
    expect(huge.text().toLowerCase()).toContain('connection: close');
    huge.s.destroy();
    expect((await balanceOf(w.h, c.orgId)).credit_cents).toBe(10);
  });

  // uWS v20.30 here drops (closes without an answer) headers over 4 KB that arrive in several TCP reads; that
  // case is a documented limitation (docs/gateway.md), pinned here so a uWS build that answers it shows up. In one
  // read, anything over our limit gets a 431. The fallback server answers 431 in both cases.
  it('431 headers_too_large over the header limit; headers under 4 KB are fine even in several TCP writes', async () => {
    const c = await paidOrg(10);
    for (const [size, split, want] of [
      [3_000, true, 'HTTP/1.1 200 OK'],
      [6_000, false, 'HTTP/1.1 200 OK'],
      [9_000, false, 'HTTP/1.1 431 Request Header Fields Too Large'],
      [40_000, false, 'HTTP/1.1 431 Request Header Fields Too Large'],
      // the known limitation of native uWS: closed, no answer
      [9_000, true, EXPECTED_SERVER === 'native' ? '' : 'HTTP/1.1 431 Request Header Fields Too Large'],
    ] as const) {
      const head = `GET /${w.slug}/users/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${c.key}\r\nX-Big: ${'b'.repeat(size)}\r\n\r\n`;
      const answer = await new Promise<string>((resolve) => {
        const s = connect(g.port, '127.0.0.1');
        let buf = '';
        s.setEncoding('utf8');
        s.on('data', (d: string) => {
          buf += d;
          if (buf.includes('\r\n\r\n')) s.destroy();
        });
        s.on('close', () => resolve(buf));
        s.on('error', () => resolve(buf));
        s.setTimeout(3000, () => s.destroy());
        s.on('connect', async () => {
          if (!split) return void s.write(head);
          for (let i = 0; i < head.length; i += 1400) {
            s.write(head.slice(i, i + 1400));
            await new Promise((r) => setTimeout(r, 2));
          }
        });
      });
      expect(answer.split('\r\n')[0]).toBe(want);
    }
  });
});
