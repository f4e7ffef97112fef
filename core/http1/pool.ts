/**
 * svc's HTTP/1.1 client: the gateway's upstream hop (replaces undici on the proxy path; docs/gateway.md "Upstream
 * client"), and the MCP and console hop to the gateway (core/gateway-calls.ts):
 * per origin a pool of keep-alive sockets, one request in flight per socket, the request head (and a small body)
 * written in one corked write, the answer parsed by response-parser.ts and handed on event by event, with
 * pause/resume for the relay's backpressure. Timeouts are checked by one coarse sweep per pool, not a timer per call.
 */
import type { Socket } from 'node:net';
import type { LookupFunction } from 'node:net';
import type { EgressPolicy } from '../egress.js';
import { ResponseParser, type ResponseHead } from './response-parser.js';
import { egressSocketConnector, parseOrigin, type Connector, type UpstreamOrigin } from './connect.js';
import { UpstreamCall, UpstreamError, type UpstreamHandler, type UpstreamRequest } from './call.js';

export interface UpstreamPoolOptions {
  /** Sockets per origin; calls beyond wait for one to come free. */
  connections: number;
  connectTimeoutMs: number;
  /** From the request written to the answer's headers complete. */
  headersTimeoutMs: number;
  /** The longest gap between two reads of the answer's body (not counted while the relay holds it paused). */
  bodyTimeoutMs: number;
  /** How long an idle socket is kept (shortened to the upstream's `Keep-Alive: timeout` minus 1 s). */
  keepAliveMs: number;
  maxHeaderBytes: number;
  maxHeaderCount: number;
  egress: EgressPolicy;
  /** Tests resolve names through their own resolver. */
  lookup?: LookupFunction;
  /** Replaces the egress connector (unit tests of the pool). */
  connector?: Connector;
}

/** One socket to one origin; `call` is the request in flight on it, if any. */
export class UpstreamConn {
  readonly parser: ResponseParser;
  call: UpstreamCall | null = null;
  /** Answers completed on this socket: a failure before any byte on a reused socket may be a stale keep-alive. */
  served = 0;
  connecting = true;
  dead = false;
  eof = false;
  /** Idle: when to close. Busy: see the call's deadline. */
  idleUntil = 0;
  keepAliveMs: number;

  constructor(
    readonly socket: Socket,
    readonly origin: OriginPool,
  ) {
    this.parser = new ResponseParser(origin.limits);
    this.keepAliveMs = origin.opts.keepAliveMs;
    socket.once(origin.target.tls ? 'secureConnect' : 'connect', () => {
      this.connecting = false;
      this.call?.send();
    });
    socket.on('data', (b: Buffer) => {
      const c = this.call;
      if (c === null) return origin.drop(this); // bytes nobody asked for: the socket's framing is lost
      c.received(b);
    });
    socket.on('end', () => {
      this.eof = true;
      if (this.call === null) origin.drop(this);
      else this.call.ended();
    });
    socket.on('error', (err) => this.#lost(err));
    socket.on('close', () => this.#lost(null));
    socket.on('drain', () => this.call?.drained());
  }

  #lost(err: Error | null): void {
    const c = this.call;
    if (c !== null && !(err === null && this.eof)) c.lost(err);
    else this.origin.drop(this);
  }
}

/** The sockets of one origin. */
export class OriginPool {
  readonly idle: UpstreamConn[] = [];
  readonly busy = new Set<UpstreamConn>();
  readonly waiting: UpstreamCall[] = [];
  open = 0;
  closed = false;
  readonly target: UpstreamOrigin;

  constructor(
    origin: string,
    readonly opts: UpstreamPoolOptions,
    readonly limits: { maxHeaderBytes: number; maxHeaderCount: number },
    private readonly connector: Connector,
  ) {
    this.target = parseOrigin(origin);
  }

  acquire(call: UpstreamCall, fresh = false): void {
    if (this.closed) {
      process.nextTick(() => call.fail('error', poolClosed()));
      return;
    }
    if (!fresh) {
      // A socket past its idle time is closed here, not only by the next sweep: an upstream that closes idle
      // sockets a little later than we keep them (the gateway, for the MCP hop) never gets a call on one.
      const now = Date.now();
      for (let c = this.idle.pop(); c !== undefined; c = this.idle.pop()) {
        if (c.dead) continue;
        if (c.idleUntil <= now) {
          this.drop(c);
          continue;
        }
        this.#assign(c, call);
        return;
      }
    }
    if (this.open >= this.opts.connections) {
      this.waiting.push(call);
      return;
    }
    const socket = this.connector(this.target);
    if (!(socket instanceof Error)) {
      this.open++;
      const conn = new UpstreamConn(socket, this);
      this.#assign(conn, call);
      return;
    }
    process.nextTick(() => call.fail('error', socket));
  }

  #assign(conn: UpstreamConn, call: UpstreamCall): void {
    this.busy.add(conn);
    conn.call = call;
    call.attach(conn);
  }

  /** A call finished cleanly on a socket that may carry the next one. */
  release(conn: UpstreamConn, now: number): void {
    conn.call = null;
    conn.served++;
    this.busy.delete(conn);
    const next = this.waiting.shift();
    if (next !== undefined) {
      this.#assign(conn, next);
      return;
    }
    conn.idleUntil = now + conn.keepAliveMs;
    this.idle.push(conn);
  }

  /** Close a socket for good (errored, ended, framing unknown, idle too long). */
  drop(conn: UpstreamConn): void {
    if (conn.dead) return;
    conn.dead = true;
    conn.call = null;
    this.open--;
    this.busy.delete(conn);
    const i = this.idle.indexOf(conn);
    if (i >= 0) this.idle.splice(i, 1);
    conn.socket.destroy();
    const next = this.waiting.shift();
    if (next !== undefined) this.acquire(next);
  }

  unqueue(call: UpstreamCall): void {
    const i = this.waiting.indexOf(call);
    if (i >= 0) this.waiting.splice(i, 1);
  }

  sweep(now: number): void {
    for (const c of this.busy) c.call?.checkDeadline(now);
    for (let i = this.idle.length - 1; i >= 0; i--) {
      const c = this.idle[i];
      if (c !== undefined && c.idleUntil <= now) this.drop(c);
    }
  }

  /** Fails the calls waiting and in flight, closes every socket, and fails any call made after. */
  close(): void {
    this.closed = true;
    for (const call of this.waiting.splice(0)) call.fail('error', poolClosed());
    for (const c of [...this.busy]) {
      if (c.call !== null) c.call.fail('error', poolClosed());
      else this.drop(c);
    }
    for (const c of [...this.idle]) this.drop(c);
  }
}

const poolClosed = () => new UpstreamError('EUPSTREAM_POOL_CLOSED', 'the HTTP client was closed');

export class UpstreamPool {
  readonly #origins = new Map<string, OriginPool>();
  readonly #connector: Connector;
  readonly #limits: { maxHeaderBytes: number; maxHeaderCount: number };
  readonly #sweeper: NodeJS.Timeout;
  #closed = false;

  constructor(readonly opts: UpstreamPoolOptions) {
    this.#connector = opts.connector ?? egressSocketConnector(opts.egress, opts.lookup);
    this.#limits = { maxHeaderBytes: opts.maxHeaderBytes, maxHeaderCount: opts.maxHeaderCount };
    // Timeouts are seconds-scale: a sweep at a tenth of the shortest keeps them within ~10 % at no per-call cost.
    const every = Math.min(
      1_000,
      Math.max(10, Math.min(opts.connectTimeoutMs, opts.headersTimeoutMs, opts.bodyTimeoutMs) / 10),
    );
    this.#sweeper = setInterval(() => {
      const now = Date.now();
      for (const o of this.#origins.values()) o.sweep(now);
    }, every);
    this.#sweeper.unref();
  }

  /** Starts a call; the handler hears exactly one of onEnd/onError unless the caller aborts first. */
  request(origin: string, req: UpstreamRequest, handler: UpstreamHandler): Pick<UpstreamCall, 'abort'> {
    if (this.#closed) {
      process.nextTick(() => handler.onError('error', poolClosed()));
      return { abort: () => undefined };
    }
    let o = this.#origins.get(origin);
    if (o === undefined) {
      try {
        o = new OriginPool(origin, this.opts, this.#limits, this.#connector);
      } catch (e) {
        // A base URL that does not parse: the call fails like an unreachable upstream (502), never throws.
        const err = e as Error;
        process.nextTick(() => handler.onError('error', err));
        return { abort: () => undefined };
      }
      this.#origins.set(origin, o);
    }
    const call = new UpstreamCall(o, req, handler);
    if (call.checkRequest()) o.acquire(call);
    return call;
  }

  /** Idle and busy sockets of an origin (tests: keep-alive reuse). */
  stats(origin: string): { open: number; idle: number } {
    const o = this.#origins.get(origin);
    return { open: o?.open ?? 0, idle: o?.idle.length ?? 0 };
  }

  /** Calls in flight or waiting fail (`EUPSTREAM_POOL_CLOSED`), as does any call made after. */
  close(): void {
    this.#closed = true;
    clearInterval(this.#sweeper);
    for (const o of this.#origins.values()) o.close();
  }
}

export type { ResponseHead };

/** One whole answer: status, headers (lower-case names, repeats kept) and the body in one Buffer. */
export interface Collected {
  status: number;
  headers: ResponseHead['headers'];
  body: Buffer;
}

/**
 * One request on the pool with its whole answer collected (the MCP and console hop, the bench's floor relay, the
 * client's tests). A failure rejects with the client's error, `kind` set on it: `timeout` or `error`.
 */
export function collect(pool: UpstreamPool, origin: string, req: UpstreamRequest): Promise<Collected> {
  return new Promise((resolve, reject) => {
    let status = 0;
    let headers: Collected['headers'] = [];
    const chunks: Buffer[] = [];
    pool.request(origin, req, {
      onHead(head) {
        status = head.status;
        headers = head.headers;
      },
      onData(chunk) {
        chunks.push(chunk);
      },
      onEnd() {
        resolve({ status, headers, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) });
      },
      onError(kind, err) {
        reject(Object.assign(err, { kind }));
      },
    });
  });
}
