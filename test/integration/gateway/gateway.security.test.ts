/**
 * The gateway's edges as an attacker probes them: the production egress rule on the upstream pool, the path rule for
 * `{param}` segments, the X-Svc-Max-Price-Cents grammar and request framing it must refuse. Nothing here is charged.
 */
import { describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { gw, balanceOf, until, useGatewayWorld, type World } from './fixture.js';
import { startGateway, type RunningGateway } from '../../helpers/gateway.js';
import { seedOrg, grantCredits, usageWithIds } from '../../helpers/db.js';

let w: World;
let g: RunningGateway;
useGatewayWorld((world, gateway) => {
  w = world;
  g = gateway;
});

async function paidOrg(cents = 100) {
  const c = await seedOrg(w.h);
  await grantCredits(w.h, c.orgId, cents);
  return c;
}

async function usageRows(orgId: string): Promise<number> {
  const r = await w.h.db
    .selectFrom(usageWithIds(w.h.db))
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('org_id', '=', orgId)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** Sends raw bytes (fetch would normalise the path or refuse the framing) and reads until the server closes. */
function raw(port: number, bytes: string, waitMs = 4000): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    let text = '';
    let closed = false;
    s.setEncoding('utf8');
    s.on('data', (d: string) => {
      text += d;
    });
    s.on('close', () => {
      closed = true;
      resolve({ text, closed });
    });
    s.on('error', () => undefined);
    s.setTimeout(waitMs, () => {
      resolve({ text, closed });
      s.destroy();
    });
    s.on('connect', () => s.write(bytes));
  });
}

function problemOf(text: string): { status: number; body: Record<string, unknown> } {
  const status = Number(text.split(' ')[1]);
  return { status, body: JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as Record<string, unknown> };
}

describe('production egress rule on the upstream pool (connect time)', () => {
  it('refuses a listing whose upstream is a loopback address: 502, nothing reaches it, nothing charged', async () => {
    const prod = await startGateway(w.dataDir, { SVC_ENV: 'production' });
    const c = await paidOrg();
    const seen = w.upstream.seen.length;
    try {
      const r = await gw(prod.url, 'GET', `/${w.slug}/users/1`, { key: c.key });
      expect(r.status).toBe(502);
      expect(r.code).toBe('upstream_error');
      expect(r.json?.detail).toMatch(/not a public address/);
      expect(r.headers.get('x-svc-charged-cents')).toBe('0');
      expect(w.upstream.seen.length).toBe(seen);
    } finally {
      await prod.stop();
    }
    // Stopped, the gateway has handed its lease back: the org's credit is whole.
    expect(await balanceOf(w.h, c.orgId)).toEqual({ credit_cents: 100, reserved_cents: 0 });
  });

  it('lets the upstream through when the operator names it in SVC_EGRESS_ALLOW', async () => {
    const host = new URL(w.upstream.url).hostname;
    const prod = await startGateway(w.dataDir, { SVC_ENV: 'production', SVC_EGRESS_ALLOW: `other.internal,${host}` });
    try {
      const c = await paidOrg();
      const r = await gw(prod.url, 'GET', `/${w.slug}/users/1`, { key: c.key });
      expect(r.status).toBe(200);
      expect(r.headers.get('x-svc-charged-cents')).toBe('3');
    } finally {
      await prod.stop();
    }
  });
});

describe('the demo upstream under the production egress rule (docs/security.md)', () => {
  it('is let through on its own port when the demo is on, and refused with the demo off', async () => {
    const port = new URL(w.upstream.url).port;
    for (const [demo, want] of [
      ['true', 200],
      ['false', 502],
    ] as const) {
      const prod = await startGateway(w.dataDir, {
        SVC_ENV: 'production',
        SVC_DEMO: demo,
        SVC_DEMO_UPSTREAM_PORT: port,
      });
      try {
        const c = await paidOrg();
        expect((await gw(prod.url, 'GET', `/${w.slug}/users/1`, { key: c.key })).status).toBe(want);
      } finally {
        await prod.stop();
      }
    }
  });
});

describe('path rule: a {param} never leaves the endpoint template', () => {
  it.each([
    ['..', '..'],
    ['.', '.'],
    ['encoded dot-dot-slash', '%2e%2e%2f%2e%2e%2fadmin'],
    ['upper-case encoded dots', '%2E%2E'],
    ['an encoded slash', 'a%2Fb'],
    ['an encoded backslash', '..%5cadmin'],
    ['a matrix suffix', '..;x=1'],
    ['broken percent-encoding', '%E0%A4%A'],
  ])('refuses %s with 400 path_not_allowed; the upstream sees nothing, nothing is charged', async (_n, seg) => {
    const c = await paidOrg();
    const seen = w.upstream.seen.length;
    const r = await raw(
      g.port,
      `GET /${w.slug}/users/${seg} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${c.key}\r\nConnection: close\r\n\r\n`,
    );
    const p = problemOf(r.text);
    expect(p.status).toBe(400);
    expect(p.body.code).toBe('path_not_allowed');
    expect(w.upstream.seen.length).toBe(seen);
    expect(await usageRows(c.orgId)).toBe(0);
    expect(await balanceOf(w.h, c.orgId)).toEqual({ credit_cents: 100, reserved_cents: 0 });
  });

  it('still forwards ordinary parameters with dots and percent-encoding, verbatim', async () => {
    const c = await paidOrg();
    for (const seg of ['v1.2', 'a%20b', '...', 'x..y']) {
      const r = await gw(g.url, 'GET', `/${w.slug}/users/${seg}`, { key: c.key });
      expect(r.status).toBe(200);
      expect(w.upstream.seen.at(-1)?.url).toBe(`/users/${seg}`);
    }
  });
});

describe('X-Svc-Max-Price-Cents accepts plain decimal digits only', () => {
  it.each(['0x1', '1e3', '+1', '1.0', '01', '', ' ', '-1', '1_000', '９'])(
    'refuses %j with 400 validation_failed naming the header; nothing charged',
    async (value) => {
      const c = await paidOrg();
      const r = await raw(
        g.port,
        `GET /${w.slug}/users/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${c.key}\r\nX-Svc-Max-Price-Cents: ${value}\r\nConnection: close\r\n\r\n`,
      );
      const p = problemOf(r.text);
      expect(p.status).toBe(400);
      expect(p.body.code).toBe('validation_failed');
      expect(p.body.errors).toEqual([{ path: 'header:X-Svc-Max-Price-Cents', message: expect.any(String) }]);
      expect(await usageRows(c.orgId)).toBe(0);
      expect(await balanceOf(w.h, c.orgId)).toEqual({ credit_cents: 100, reserved_cents: 0 });
    },
  );

  it('accepts 3 and 0 as caps (0 refuses the 3-cent call with price_above_max)', async () => {
    const c = await paidOrg();
    const h = (v: string) => ({ key: c.key, headers: { 'x-svc-max-price-cents': v } });
    expect((await gw(g.url, 'GET', `/${w.slug}/users/1`, h('3'))).status).toBe(200);
    expect((await gw(g.url, 'GET', `/${w.slug}/users/1`, h('0'))).code).toBe('price_above_max');
  });
});

describe('request framing and requests uWS cannot route', () => {
  it('refuses duplicate, conflicting Content-Length with 400 and closes; the call is not charged', async () => {
    const c = await paidOrg();
    const seen = w.upstream.seen.length;
    const r = await raw(
      g.port,
      `POST /${w.slug}/echo HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${c.key}\r\nContent-Length: 3\r\nContent-Length: 5\r\n\r\nabcde`,
    );
    const p = problemOf(r.text);
    expect(p.status).toBe(400);
    expect(p.body.code).toBe('validation_failed');
    expect(p.body.errors).toEqual([{ path: 'header:Content-Length', message: expect.any(String) }]);
    expect(r.text.toLowerCase()).toContain('connection: close');
    expect(r.closed).toBe(true);
    expect(w.upstream.seen.length).toBe(seen);
    expect(await usageRows(c.orgId)).toBe(0);
  });

  it('accepts a repeated Content-Length with the same value (RFC 9112 allows it)', async () => {
    const c = await paidOrg();
    const r = await raw(
      g.port,
      `POST /${w.slug}/echo HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${c.key}\r\nContent-Length: 3\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc`,
    );
    expect(r.text.split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
  });

  it.each(['PROPFIND', 'FOO', 'PURGE'])('closes a %s request promptly (uWS routes no unknown method)', async (m) => {
    const r = await raw(g.port, `${m} /${w.slug}/users/1 HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(r.closed).toBe(true);
    expect(r.text).toBe('');
  });
});

describe('a gateway that dies while the upstream serves a call (docs/gateway.md)', () => {
  it('leaves no usage row and charges nothing for that call', async () => {
    const doomed = await startGateway(w.dataDir);
    const c = await paidOrg();
    const before = w.upstream.seen.length;
    const answer = gw(doomed.url, 'GET', `/${w.slug}/slow`, { key: c.key }).catch(() => null);
    expect(await until(async () => w.upstream.seen.length > before, 5000)).toBe(true);
    await doomed.stop('SIGKILL');
    expect(await answer).toBeNull();
    expect(await usageRows(c.orgId)).toBe(0);
    expect((await balanceOf(w.h, c.orgId)).credit_cents).toBe(100);
  });
});
