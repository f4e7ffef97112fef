import { describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { readFileSync } from 'node:fs';
import { useGatewayWorld, balanceOf, type World } from './fixture.js';
import type { RunningGateway } from '../../helpers/gateway.js';
import { seedOrg, grantCredits, expectLedgerConsistent, usageWithIds } from '../../helpers/db.js';

let w: World;
let g: RunningGateway;

useGatewayWorld((world, gateway) => {
  w = world;
  g = gateway;
});

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}

describe('streaming', () => {
  // 150 MB (three times the 50 MB requirement) so that bounded memory is visible: Node reclaims the relayed
  // chunks lazily (RSS grows ~50 MB before V8's external-memory GC runs), so a 50 MB run cannot tell apart
  // "relayed with backpressure" from "buffered whole"; at 150 MB the difference is plain.
  it('relays a 150 MB upstream answer to a slow client in bounded memory, charged once', async () => {
    const c = await seedOrg(w.h);
    await grantCredits(w.h, c.orgId, 10);
    const pid = g.child.pid!;
    const base = rssMb(pid);
    let peak = base;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 20);
    const total = 150 * 1024 * 1024;
    const { head, bodyBytes } = await new Promise<{ head: string; bodyBytes: number }>((resolve, reject) => {
      const s = connect({ port: g.port, host: '127.0.0.1' });
      let headText = '';
      let headDone = false;
      let bytes = 0;
      s.on('connect', () =>
        s.write(`GET /${w.slug}/big?mb=150 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${c.key}\r\n\r\n`),
      );
      s.on('data', (chunk: Buffer) => {
        if (!headDone) {
          const text = chunk.toString('latin1');
          const i = text.indexOf('\r\n\r\n');
          headText += i >= 0 ? text.slice(0, i) : text;
          if (i >= 0) {
            headDone = true;
            bytes += chunk.length - i - 4;
          }
        } else bytes += chunk.length;
        // A slow reader: pause after every chunk so the gateway sees backpressure.
        s.pause();
        setTimeout(() => s.resume(), 1);
      });
      s.on('end', () => resolve({ head: headText, bodyBytes: bytes }));
      s.on('error', reject);
      // The gateway keeps the connection alive: close once the last chunk marker arrived.
      const check = setInterval(() => {
        if (bytes >= total) {
          clearInterval(check);
          setTimeout(() => s.end(), 200);
        }
      }, 50);
    });
    clearInterval(sampler);
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
    expect(head.toLowerCase()).toContain('x-svc-charged-cents: 1');
    // Body plus chunked framing (hex sizes and CRLFs) is at least the 50 MB payload.
    expect(bodyBytes).toBeGreaterThanOrEqual(total);
    expect(peak - base).toBeLessThan(100); // MB: far below the 150 MB body, so it was never buffered whole
    expect((await balanceOf(w.h, c.orgId)).credit_cents).toBe(9);
    await expectLedgerConsistent(w.h);
  }, 60_000);

  it('a client that leaves mid-stream is charged once (at the headers), leaves one usage row, and the gateway stays healthy', async () => {
    const c = await seedOrg(w.h);
    await grantCredits(w.h, c.orgId, 10);
    await new Promise<void>((resolve) => {
      const s = connect(g.port, '127.0.0.1');
      let got = 0;
      s.on('connect', () =>
        s.write(`GET /${w.slug}/big?mb=100 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${c.key}\r\n\r\n`),
      );
      s.on('data', (d: Buffer) => {
        got += d.length;
        if (got > 2 * 1024 * 1024) s.destroy();
      });
      s.on('close', () => resolve());
    });
    await new Promise((r) => setTimeout(r, 300));
    const usage = await w.h.db
      .selectFrom(usageWithIds(w.h.db))
      .select(['charged_cents'])
      .where('org_id', '=', c.orgId)
      .execute();
    expect(usage).toEqual([{ charged_cents: 1 }]);
    expect((await balanceOf(w.h, c.orgId)).credit_cents).toBe(9);
    expect((await fetch(`${g.url}/healthz`)).status).toBe(200);
    await expectLedgerConsistent(w.h);
  }, 30_000);
});
