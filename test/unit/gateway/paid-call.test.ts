/**
 * The paid call's state machine (gateway/paid-call.ts) driven event by event against a fake settle sink: which
 * record is written (charged or not), when the reservation is cancelled, what the client gets, and that an event
 * arriving in the wrong state changes nothing. The same paths run end to end in test/integration/gateway.
 */
import { describe, expect, it } from 'vitest';
import { SvcError } from '../../../core/errors.js';
import { PaidCall, type PaidCallOptions } from '../../../gateway/paid-call.js';
import type { Lease } from '../../../gateway/leases.js';
import type { ClientSink, Headers } from '../../../gateway/respond.js';
import type { SettleRecord } from '../../../gateway/settle-writer.js';
import type { UpstreamController } from '../../../core/http1/call.js';

type Answer =
  | { kind: 'send'; status: number; headers: Headers; body: string }
  | { kind: 'problem'; status: number; code: string; headers: Headers }
  | { kind: 'begin'; status: number; headers: Headers }
  | { kind: 'write'; body: string }
  | { kind: 'end' }
  | { kind: 'close' };

/** Records what the client would see; `leave()` is the client going away. */
class FakeClient implements ClientSink {
  aborted = false;
  out: Answer[] = [];
  #onAbort: (() => void) | null = null;
  constructor(readonly isHead = false) {}
  onAbort(cb: () => void): void {
    this.#onAbort = cb;
  }
  leave(): void {
    this.aborted = true;
    this.#onAbort?.();
  }
  problem(err: SvcError, _requestId: string, headers: Headers): void {
    if (this.aborted) return;
    this.out.push({ kind: 'problem', status: err.status, code: err.code, headers });
    this.aborted = true;
  }
  send(status: number, headers: Headers, body: Buffer | string): void {
    if (this.aborted) return;
    this.out.push({ kind: 'send', status, headers, body: body.toString() });
    this.aborted = true;
  }
  begin(status: number, headers: Headers): void {
    this.out.push({ kind: 'begin', status, headers });
  }
  write(chunk: Buffer): boolean {
    this.out.push({ kind: 'write', body: chunk.toString() });
    return true;
  }
  onWritable(): void {}
  end(): void {
    this.out.push({ kind: 'end' });
    this.aborted = true;
  }
  close(): void {
    this.out.push({ kind: 'close' });
    this.aborted = true;
  }
}

/** The settle writer, leases, claims and upstream as recorders; each settle waits until the test decides it. */
function harness(o: { price?: number; idemKey?: string; isHead?: boolean; idempotentBodyMax?: number } = {}) {
  const price = o.price ?? 7;
  const lease: Lease | null =
    price > 0
      ? { id: 'lease_1', orgId: 'org_c', keyId: 'key_1', day: 1, amount: 100, spent: 0, inflight: price, lastUsed: 0 }
      : null;
  const settles: { rec: SettleRecord; done(balance: number): void; failed(e: Error): void }[] = [];
  const cancels: number[] = [];
  const abandons: string[] = [];
  const counted: string[] = [];
  const upstreamFailures: Error[] = [];
  const upstreamAborts: string[] = [];
  const client = new FakeClient(o.isHead ?? false);
  const ctrl = {
    paused: false,
    pause() {
      this.paused = true;
    },
    resume() {
      this.paused = false;
    },
    abort(reason: Error) {
      upstreamAborts.push(reason.message);
    },
  } satisfies UpstreamController & { paused: boolean };
  const options: PaidCallOptions = {
    deps: {
      cfg: { idempotentBodyMax: o.idempotentBodyMax ?? 1024 },
      clock: { now: () => 1_000 },
      writer: {
        settle: (rec) => new Promise<number>((resolve, reject) => settles.push({ rec, done: resolve, failed: reject })),
      },
      leases: { cancel: (_l, cents) => cancels.push(cents) },
      idem: { abandon: (_org, key) => abandons.push(key) },
      listings: { countCall: (_org, endpointId) => counted.push(endpointId) },
      onUpstreamFailure: (_slug, _id, err) => upstreamFailures.push(err),
    },
    sink: client,
    method: 'GET',
    requestId: 'req_1',
    body: null,
    key: { orgId: 'org_c', keyId: 'key_1' },
    resolved: { listing: { apiId: 'api_1', providerOrgId: 'org_p', slug: 'wx' }, endpoint: { id: 'ep_1' } },
    price,
    lease,
    day: 1,
    idemKey: o.idemKey ?? '',
    ids: [
      ['x-svc-request-id', 'req_1'],
      ['x-svc-price-cents', String(price)],
    ],
  };
  const call = new PaidCall(options);
  call.attach((reason) => upstreamAborts.push(reason.message));
  return { call, client, ctrl, settles, cancels, abandons, counted, upstreamFailures, upstreamAborts, price };
}

/** Lets the settle promise's callbacks run. */
const tick = () => new Promise<void>((r) => setImmediate(r));
const hdr = (a: Answer, name: string) => ('headers' in a ? a.headers.find((h) => h[0] === name)?.[1] : undefined);
const TEXT: Headers = [['content-type', 'text/plain']];

describe('PaidCall: a buffered answer', () => {
  it('is charged once, after its record commits, and answered in one write with the balance', async () => {
    const t = harness();
    t.call.start(200, TEXT, 5, t.ctrl);
    expect(t.call.state).toBe('buffering');
    t.call.data(Buffer.from('hel'), t.ctrl);
    t.call.data(Buffer.from('lo'), t.ctrl);
    t.call.end();
    expect(t.call.state).toBe('settling');
    expect(t.client.out).toEqual([]); // nothing before the commit
    expect(t.settles).toHaveLength(1);
    expect(t.settles[0]!.rec).toMatchObject({ status: 200, chargedCents: 7, leaseId: 'lease_1', errorCode: null });
    t.settles[0]!.done(93);
    await tick();
    expect(t.call.state).toBe('done');
    expect(t.client.out).toHaveLength(1);
    const a = t.client.out[0]!;
    expect(a).toMatchObject({ kind: 'send', status: 200, body: 'hello' });
    expect(hdr(a, 'x-svc-charged-cents')).toBe('7');
    expect(hdr(a, 'x-svc-balance-cents')).toBe('93');
    expect(t.cancels).toEqual([]); // the commit took the reservation over
    expect(t.counted).toEqual(['ep_1']);
  });

  it('a 5xx is relayed but not charged: the reservation goes back before the record is written', async () => {
    const t = harness({ idemKey: 'idem-1' });
    t.call.start(503, TEXT, 4, t.ctrl);
    t.call.data(Buffer.from('busy'), t.ctrl);
    t.call.end();
    expect(t.settles[0]!.rec).toMatchObject({
      status: 503,
      chargedCents: 0,
      leaseId: null,
      errorCode: 'upstream_status',
    });
    expect(t.settles[0]!.rec.idempotency).toBeUndefined();
    expect(t.cancels).toEqual([7]);
    expect(t.abandons).toEqual(['idem-1']); // a retry of this key runs again
    t.settles[0]!.done(100);
    await tick();
    expect(t.client.out[0]).toMatchObject({ kind: 'send', status: 503, body: 'busy' });
    expect(hdr(t.client.out[0]!, 'x-svc-charged-cents')).toBe('0');
    expect(t.counted).toEqual([]);
  });

  it('with an Idempotency-Key the record carries the answer for replay', () => {
    const t = harness({ idemKey: 'idem-1' });
    t.call.start(200, TEXT, null, t.ctrl); // unknown length, still buffered: the replay needs the whole body
    expect(t.call.state).toBe('buffering');
    t.call.data(Buffer.from('ok'), t.ctrl);
    t.call.end();
    expect(t.settles[0]!.rec.idempotency).toMatchObject({ idemKey: 'idem-1', status: 200, body: Buffer.from('ok') });
  });

  it('an answer past the replay cap fails the call uncharged, and a later abort writes no second record', async () => {
    const t = harness({ idemKey: 'idem-1', idempotentBodyMax: 4 });
    t.call.start(200, TEXT, null, t.ctrl);
    t.call.data(Buffer.from('abc'), t.ctrl);
    t.call.data(Buffer.from('de'), t.ctrl);
    expect(t.call.state).toBe('refunding');
    expect(t.upstreamAborts).toEqual(['too large for replay']);
    t.client.leave();
    t.call.data(Buffer.from('f'), t.ctrl);
    t.call.end();
    expect(t.settles).toHaveLength(1);
    expect(t.settles[0]!.rec).toMatchObject({ status: 502, chargedCents: 0, errorCode: 'upstream_error' });
    expect(t.cancels).toEqual([7]);
  });
});

describe('PaidCall: a streamed answer (charged when the headers arrive)', () => {
  it('pauses the upstream until the charge commits, then relays what was held and resumes', async () => {
    const t = harness();
    t.call.start(200, TEXT, null, t.ctrl);
    expect(t.call.state).toBe('committing');
    expect(t.ctrl.paused).toBe(true);
    expect(t.settles[0]!.rec).toMatchObject({ status: 200, chargedCents: 7, leaseId: 'lease_1' });
    t.call.data(Buffer.from('a'), t.ctrl);
    expect(t.client.out).toEqual([]);
    t.settles[0]!.done(93);
    await tick();
    expect(t.call.state).toBe('streaming');
    expect(t.ctrl.paused).toBe(false);
    t.call.data(Buffer.from('b'), t.ctrl);
    t.call.end();
    expect(t.client.out.map((a) => a.kind)).toEqual(['begin', 'write', 'write', 'end']);
    expect(hdr(t.client.out[0]!, 'x-svc-charged-cents')).toBe('7');
    expect(t.call.state).toBe('done');
    expect(t.cancels).toEqual([]);
  });

  it('a body that ended during the commit goes out in one write', async () => {
    const t = harness();
    t.call.start(200, TEXT, 100_000, t.ctrl);
    t.call.data(Buffer.from('whole'), t.ctrl);
    t.call.end();
    expect(t.call.state).toBe('committing_ended');
    t.settles[0]!.done(93);
    await tick();
    expect(t.client.out).toEqual([expect.objectContaining({ kind: 'send', status: 200, body: 'whole' })]);
  });

  it('a body that broke during the commit is charged (documented) and the connection closes after what arrived', async () => {
    const t = harness();
    t.call.start(200, TEXT, null, t.ctrl);
    t.call.data(Buffer.from('part'), t.ctrl);
    t.call.fail('error', new Error('reset'));
    expect(t.call.state).toBe('committing_broken');
    t.settles[0]!.done(93);
    await tick();
    expect(t.client.out.map((a) => a.kind)).toEqual(['begin', 'write', 'close']);
    expect(t.settles).toHaveLength(1);
    expect(t.cancels).toEqual([]);
  });

  it('a failure mid-stream closes the client connection; the charge stands', async () => {
    const t = harness();
    t.call.start(200, TEXT, null, t.ctrl);
    t.settles[0]!.done(93);
    await tick();
    t.call.fail('timeout', new Error('body timeout'));
    expect(t.client.out.map((a) => a.kind)).toEqual(['begin', 'close']);
    expect(t.settles).toHaveLength(1);
  });

  it('a client gone after the headers: the upstream stops, the charge stands, nothing is answered', async () => {
    const t = harness();
    t.call.start(200, TEXT, null, t.ctrl);
    t.client.leave();
    expect(t.upstreamAborts).toEqual(['client aborted']);
    t.settles[0]!.done(93);
    await tick();
    expect(t.call.state).toBe('done');
    expect(t.client.out).toEqual([]);
    expect(t.settles).toHaveLength(1);
    expect(t.cancels).toEqual([]);
  });

  it('a client gone mid-stream: the upstream stops and nothing more is written', async () => {
    const t = harness();
    t.call.start(200, TEXT, null, t.ctrl);
    t.settles[0]?.done(93);
    await tick();
    t.call.data(Buffer.from('a'), t.ctrl);
    t.client.leave();
    expect(t.upstreamAborts).toEqual(['client aborted']);
    t.call.data(Buffer.from('b'), t.ctrl);
    t.call.end();
    expect(t.client.out.map((a) => a.kind)).toEqual(['begin', 'write']);
    expect(t.call.state).toBe('done');
    expect(t.settles).toHaveLength(1);
  });

  it('a HEAD is never streamed: it settles at the end like a small answer', () => {
    const t = harness({ isHead: true });
    t.call.start(200, TEXT, 1_000_000, t.ctrl);
    expect(t.call.state).toBe('buffering');
  });
});

describe('PaidCall: failures and aborts before an answer are not charged', () => {
  it('an upstream failure before the headers: reservation cancelled, 502 recorded uncharged, then answered', async () => {
    const t = harness({ idemKey: 'idem-1' });
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    t.call.fail('error', refused);
    expect(t.call.state).toBe('refunding');
    expect(t.cancels).toEqual([7]);
    expect(t.abandons).toEqual(['idem-1']);
    expect(t.upstreamFailures).toEqual([refused]); // the operator's log hears the errno
    expect(t.settles[0]!.rec).toMatchObject({
      status: 502,
      chargedCents: 0,
      leaseId: null,
      errorCode: 'upstream_error',
    });
    expect(t.client.out).toEqual([]); // answered once recorded
    t.settles[0]!.done(100);
    await tick();
    expect(t.client.out).toEqual([expect.objectContaining({ kind: 'problem', status: 502, code: 'upstream_error' })]);
    expect(hdr(t.client.out[0]!, 'x-svc-charged-cents')).toBe('0');
  });

  it('a timeout is 504, and answered even when its record cannot be written', async () => {
    const t = harness();
    t.call.fail('timeout', new Error('headers timeout'));
    t.settles[0]!.failed(new Error('disk full'));
    await tick();
    expect(t.client.out).toEqual([expect.objectContaining({ kind: 'problem', status: 504, code: 'upstream_timeout' })]);
    expect(t.cancels).toEqual([7]); // given back once, not again on the failed commit
  });

  it('an answer over the size cap after the headers is a 502, not charged', async () => {
    const t = harness();
    t.call.start(200, TEXT, 10, t.ctrl);
    t.call.fail('too_large', new Error('too large'));
    expect(t.settles[0]!.rec).toMatchObject({ status: 502, chargedCents: 0 });
    expect(t.cancels).toEqual([7]);
  });

  it('a client gone before the headers: upstream stopped, recorded as 499 uncharged, nothing answered', async () => {
    const t = harness({ idemKey: 'idem-1' });
    t.client.leave();
    expect(t.call.state).toBe('done');
    expect(t.upstreamAborts).toEqual(['client aborted']);
    expect(t.cancels).toEqual([7]);
    expect(t.abandons).toEqual(['idem-1']);
    expect(t.settles[0]!.rec).toMatchObject({ status: 499, chargedCents: 0, errorCode: 'client_aborted' });
    t.settles[0]!.done(100);
    await tick();
    expect(t.client.out).toEqual([]);
  });

  it('a client gone after the headers of a buffered answer: the same, not charged', () => {
    const t = harness();
    t.call.start(200, TEXT, 5, t.ctrl);
    t.call.data(Buffer.from('hel'), t.ctrl);
    t.client.leave();
    expect(t.upstreamAborts).toEqual(['client aborted']);
    expect(t.settles[0]!.rec).toMatchObject({ status: 499, chargedCents: 0 });
    expect(t.cancels).toEqual([7]);
  });
});

describe('PaidCall: a failed commit is a 500 and not charged', () => {
  it('buffered: the reservation is cancelled, the claim freed, the client told 500', async () => {
    const t = harness({ idemKey: 'idem-1' });
    t.call.start(200, TEXT, 2, t.ctrl);
    t.call.data(Buffer.from('ok'), t.ctrl);
    t.call.end();
    expect(t.cancels).toEqual([]); // the charge was handed to the writer...
    t.settles[0]!.failed(new Error('SQLITE_FULL'));
    await tick();
    expect(t.cancels).toEqual([7]); // ...and comes back when it did not commit
    expect(t.abandons).toEqual(['idem-1']);
    expect(t.client.out).toEqual([expect.objectContaining({ kind: 'problem', status: 500, code: 'internal' })]);
    expect(hdr(t.client.out[0]!, 'x-svc-charged-cents')).toBeUndefined(); // the sink adds its 0
  });

  it('streamed: the upstream is stopped, nothing of the body is sent, the client told 500', async () => {
    const t = harness();
    t.call.start(200, TEXT, null, t.ctrl);
    t.call.data(Buffer.from('held'), t.ctrl);
    t.settles[0]!.failed(new Error('holder reaped'));
    await tick();
    expect(t.upstreamAborts).toEqual(['settle failed']);
    expect(t.cancels).toEqual([7]);
    expect(t.client.out).toEqual([expect.objectContaining({ kind: 'problem', status: 500, code: 'internal' })]);
  });
  it.each(['ended', 'broke'] as const)('streamed, the body %s during the commit: 500, none of it sent', async (how) => {
    const t = harness();
    t.call.start(200, TEXT, null, t.ctrl);
    t.call.data(Buffer.from('held'), t.ctrl);
    if (how === 'ended') t.call.end();
    else t.call.fail('error', new Error('reset'));
    t.settles[0]?.failed(new Error('disk I/O error'));
    await tick();
    expect(t.client.out).toEqual([expect.objectContaining({ kind: 'problem', status: 500, code: 'internal' })]);
    expect(t.cancels).toEqual([7]);
    expect(t.upstreamAborts).toEqual(['settle failed']);
  });
});

describe('PaidCall: an event in the wrong state changes nothing', () => {
  it('a second end, a late failure, a second commit outcome and a late abort after a charged answer', async () => {
    const t = harness();
    t.call.start(200, TEXT, 2, t.ctrl);
    t.call.start(500, TEXT, 2, t.ctrl); // a second head is ignored
    t.call.data(Buffer.from('ok'), t.ctrl);
    t.call.end();
    t.call.end();
    t.call.fail('error', new Error('late'));
    t.client.leave(); // charged: the answer was complete; the client leaving now changes nothing
    t.settles[0]!.done(93);
    await tick();
    t.call.commitDone(1);
    t.call.commitFailed(new Error('late'));
    t.call.data(Buffer.from('more'), t.ctrl);
    expect(t.settles).toHaveLength(1);
    expect(t.settles[0]!.rec).toMatchObject({ status: 200, chargedCents: 7 });
    expect(t.cancels).toEqual([]);
    expect(t.upstreamAborts).toEqual([]);
    expect(t.call.state).toBe('done');
  });

  it('a failure after a client abort, and a second abort, write no second record and cancel once', async () => {
    const t = harness();
    t.client.leave();
    t.call.fail('error', new Error('reset'));
    t.call.clientAborted();
    t.call.start(200, TEXT, 2, t.ctrl);
    t.call.end();
    expect(t.settles).toHaveLength(1);
    expect(t.cancels).toEqual([7]);
    expect(t.upstreamFailures).toEqual([]);
  });

  it('a commit outcome before any record was handed over is ignored', () => {
    const t = harness();
    t.call.commitDone(5);
    t.call.commitFailed(new Error('x'));
    expect(t.call.state).toBe('awaiting_headers');
    expect(t.client.out).toEqual([]);
  });

  it('a free call never touches a lease', async () => {
    const t = harness({ price: 0 });
    t.call.fail('error', new Error('reset'));
    t.settles[0]!.done(0);
    await tick();
    expect(t.cancels).toEqual([]);
    expect(t.settles[0]!.rec).toMatchObject({ chargedCents: 0, leaseId: null });
  });
});
