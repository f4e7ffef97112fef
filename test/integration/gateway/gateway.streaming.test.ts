import { describe, expect, it } from 'vitest';
import { connect, type Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { useGatewayWorld, balanceOf, type World } from './fixture.js';
import { startGateway, type RunningGateway } from '../../helpers/gateway.js';
import { seedOrg, grantCredits, expectLedgerConsistent, usageWithIds } from '../../helpers/db.js';
import { dechunk } from '../../helpers/http.js';

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

/** A raw keep-alive client: answers are read whole (Content-Length or chunked) so the socket can carry the next. */
class KeptSocket {
  readonly #s: Socket;
  #buf = Buffer.alloc(0);
  #wake: (() => void) | null = null;
  closed = false;

  constructor(port: number) {
    this.#s = connect(port, '127.0.0.1');
    this.#s.on('data', (d: Buffer) => {
      this.#buf = Buffer.concat([this.#buf, d]);
      this.#wake?.();
    });
    this.#s.on('error', () => undefined);
    this.#s.on('close', () => {
      this.closed = true;
      this.#wake?.();
    });
  }

  write(bytes: string): void {
    this.#s.write(bytes, 'latin1');
  }

  /** The next whole answer (status and body), or null if none came within `ms`. */
  async answer(ms: number): Promise<{ status: number; body: string } | null> {
    const until = Date.now() + ms;
    for (;;) {
      const whole = this.#take();
      if (whole) return whole;
      const left = until - Date.now();
      if (left <= 0 || this.closed) return null;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.#wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.#wake = null;
    }
  }

  #take(): { status: number; body: string } | null {
    const end = this.#buf.indexOf('\r\n\r\n');
    if (end < 0) return null;
    const head = this.#buf.toString('latin1', 0, end).toLowerCase();
    const length = /\r\ncontent-length: *(\d+)/.exec(head);
    let whole: { body: Buffer; next: number } | null;
    if (length) {
      const next = end + 4 + Number(length[1]);
      whole = this.#buf.length < next ? null : { body: this.#buf.subarray(end + 4, next), next };
    } else whole = dechunk(this.#buf, end + 4);
    if (!whole) return null;
    this.#buf = this.#buf.subarray(whole.next);
    return { status: Number(head.split(' ')[1]), body: whole.body.toString('utf8') };
  }

  destroy(): void {
    this.#s.destroy();
  }
}

const chunkOf = (n: number) => `${n.toString(16)}\r\n${'y'.repeat(n)}\r\n`;

describe('streaming', () => {
  // A streamed upload pauses the client socket once 256 KiB wait unread (request-body.ts). A chunked body's chunks
  // arrive several per socket read, so that pause could fall in the very read that ended the body; an ended stream
  // never asks for more, nothing resumed the socket, and the connection's next request went unread until uWS reset
  // it at its idle timeout (~10 s). Staged here: one upstream socket, held by /slow, so the upload waits unread.
  it('answers the next request on the same keep-alive connection after an upload paused in its last read', async () => {
    const one = await startGateway(w.dataDir, { SVC_GATEWAY_UPSTREAM_CONNECTIONS: '1' });
    const c = await seedOrg(w.h);
    await grantCredits(w.h, c.orgId, 20);
    const auth = `Authorization: Bearer ${c.key}\r\nHost: x\r\n`;
    const hold = fetch(`${one.url}/${w.slug}/slow`, { headers: { authorization: `Bearer ${c.key}` } });
    const s = new KeptSocket(one.port);
    try {
      await new Promise((r) => setTimeout(r, 300));
      s.write(`POST /${w.slug}/echo HTTP/1.1\r\n${auth}Transfer-Encoding: chunked\r\n\r\n${chunkOf(1024).repeat(250)}`);
      await new Promise((r) => setTimeout(r, 300));
      // 250 KiB wait unread; this read takes them past 256 KiB and also ends the body.
      s.write(`${chunkOf(1024).repeat(10)}0\r\n\r\n`);
      const up = await s.answer(15_000);
      expect(up?.status).toBe(200);
      expect((JSON.parse(up!.body) as { body: string }).body).toBe('y'.repeat(260 * 1024));
      s.write(`GET /${w.slug}/free HTTP/1.1\r\n${auth}\r\n`);
      const next = await s.answer(3000);
      expect(next?.status).toBe(200);
      expect(s.closed).toBe(false);
    } finally {
      s.destroy();
      await hold;
      await one.stop();
    }
  }, 30_000);

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
