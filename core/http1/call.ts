/**
 * One request on the upstream pool: written when it gets a socket, its answer pumped from the parser to the handler
 * until the handler pauses, the deadline of its phase (connect, headers, body) checked by the pool's sweep. A call
 * that fails before any byte of the answer on a reused socket (the upstream closed it while idle) is sent once more
 * on a fresh socket when that cannot repeat an effect: idempotent method, body not a stream.
 */
import type { Readable } from 'node:stream';
import { UpstreamParseError, type ResponseHead } from './response-parser.js';
import type { OriginPool, UpstreamConn } from './pool.js';

export interface UpstreamController {
  /** Stop handing on the answer (and reading the socket) until resume(). */
  pause(): void;
  resume(): void;
  /** The caller gave up: the socket is closed, the handler hears nothing more. */
  abort(reason: Error): void;
}

export interface UpstreamHandler {
  onHead(head: ResponseHead, ctrl: UpstreamController): void;
  onData(chunk: Buffer, ctrl: UpstreamController): void;
  onEnd(): void;
  onError(kind: 'timeout' | 'error', err: Error): void;
}

export interface UpstreamRequest {
  method: string;
  /** Path and query, as sent on the request line. */
  path: string;
  /** Lower-case names; `host`, `content-length` and `transfer-encoding` are the client's to set. */
  headers: Record<string, string>;
  /** A whole body, or a stream (sent with the declared `content-length` header, else chunked). */
  body: Buffer | Readable | null;
}

/** A failure of the connection or the protocol; `code` says which (pipeline.ts turns it into the consumer's words). */
export class UpstreamError extends Error {
  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'UpstreamError';
  }
}

/**
 * Request headers a caller never sets: the connection's own (RFC 9110 §7.6.1) and the framing this client writes
 * (`host`, `content-length`, `transfer-encoding`). Each caller drops them, with its own additions (steps/forward.ts,
 * core/gateway-calls.ts).
 */
export const CLIENT_OWNED_HEADERS: readonly string[] = [
  'connection',
  'keep-alive',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
  'expect',
];

const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE']);
const EXPECTS_PAYLOAD = new Set(['POST', 'PUT', 'PATCH']);
/** Request-target: visible ASCII only (no space, control or non-ASCII byte can reach the request line). */
const REQUEST_TARGET = /^[\x21-\x7e]+$/;
/** Method and header names are tokens (RFC 9110 §5.6.2). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

const enum Phase {
  Waiting,
  Connect,
  Headers,
  Body,
  Done,
}

export class UpstreamCall implements UpstreamController {
  #conn: UpstreamConn | null = null;
  #phase = Phase.Waiting;
  #deadline = 0;
  #paused = false;
  #pumping = false;
  #gotBytes = false;
  #retried = false;
  /** The request (head and body) is fully written: only then may the socket carry another call. */
  #sent = false;
  #stream: Readable | null = null;
  #onStreamData: ((c: Buffer) => void) | null = null;

  constructor(
    private readonly origin: OriginPool,
    private readonly req: UpstreamRequest,
    private readonly handler: UpstreamHandler,
  ) {
    // From now on, not once a socket is there: a body over the gateway's cap fails while the call waits to connect.
    const b = req.body;
    if (b !== null && !Buffer.isBuffer(b)) {
      // A body that failed before this call took it (over the cap while the pipeline awaited PostgreSQL) emits
      // nothing more: fail on the next tick, as a failure while connecting would.
      const failed = b.errored;
      if (failed) process.nextTick(() => this.fail('error', failed));
      else b.once('error', (e) => this.fail('error', e));
    }
  }

  /** False (and the call failed on the next tick) when the request cannot be written as HTTP/1.1. */
  checkRequest(): boolean {
    let bad = !TOKEN.test(this.req.method) || !REQUEST_TARGET.test(this.req.path);
    for (const k in this.req.headers) {
      const v = this.req.headers[k]!;
      if (!TOKEN.test(k) || v.indexOf('\r') >= 0 || v.indexOf('\n') >= 0 || v.indexOf('\0') >= 0) bad = true;
    }
    if (!bad) return true;
    process.nextTick(() => this.fail('error', new UpstreamError('EUPSTREAM_REQUEST', 'request not valid HTTP/1.1')));
    return false;
  }

  attach(conn: UpstreamConn): void {
    this.#conn = conn;
    conn.parser.start(this.req.method === 'HEAD');
    if (conn.connecting) {
      this.#phase = Phase.Connect;
      this.#deadline = Date.now() + this.origin.opts.connectTimeoutMs;
    } else this.send();
  }

  /** Writes the request; the socket is connected. */
  send(): void {
    const conn = this.#conn;
    if (conn === null || this.#phase === Phase.Done) return;
    this.#phase = Phase.Headers;
    this.#deadline = Date.now() + this.origin.opts.headersTimeoutMs;
    const { method, path, headers, body } = this.req;
    let head = `${method} ${path} HTTP/1.1\r\nhost: ${this.origin.target.hostHeader}\r\n`;
    for (const k in headers) head += `${k}: ${headers[k]}\r\n`;
    const s = conn.socket;
    // UTF-8, not latin1: header values are strings uWS decoded from UTF-8, so this sends the consumer's own bytes; a
    // latin1 write would send a character's low byte instead (U+010D U+010A as CR LF: a split, smuggled request).
    if (body === null || Buffer.isBuffer(body)) {
      const len = body === null ? 0 : body.length;
      if (len > 0 || EXPECTS_PAYLOAD.has(method)) head += `content-length: ${len}\r\n`;
      head += '\r\n';
      if (len === 0) s.write(head, 'utf8');
      else {
        s.cork();
        s.write(head, 'utf8');
        s.write(body!);
        s.uncork();
      }
      this.#sent = true;
      return;
    }
    const declared = headers['content-length'];
    const chunked = declared === undefined;
    if (chunked) head += 'transfer-encoding: chunked\r\n';
    s.write(`${head}\r\n`, 'utf8');
    let bytes = 0;
    this.#stream = body;
    const headersTimeoutMs = this.origin.opts.headersTimeoutMs;
    this.#onStreamData = (c: Buffer) => {
      bytes += c.length;
      // The headers timeout runs from the request written: while the body streams in, each chunk restarts it
      // (a slow upload is not a slow upstream; a stalled one still times out).
      if (this.#phase === Phase.Headers) this.#deadline = Date.now() + headersTimeoutMs;
      let ok: boolean;
      if (chunked) {
        s.cork();
        s.write(`${c.length.toString(16)}\r\n`, 'latin1');
        s.write(c);
        ok = s.write('\r\n', 'latin1');
        s.uncork();
      } else ok = s.write(c);
      if (!ok) body.pause();
    };
    body.on('data', this.#onStreamData);
    body.once('end', () => {
      if (this.#phase === Phase.Done) return;
      if (chunked) s.write('0\r\n\r\n', 'latin1');
      else if (String(bytes) !== declared)
        return this.fail(
          'error',
          new UpstreamError('EUPSTREAM_REQUEST', 'request body length differs from its Content-Length'),
        );
      this.#sent = true;
      if (this.#phase === Phase.Headers) this.#deadline = Date.now() + headersTimeoutMs;
    });
  }

  drained(): void {
    if (this.#stream !== null && !this.#sent) this.#stream.resume();
  }

  received(b: Buffer): void {
    this.#gotBytes = true;
    this.#conn!.parser.push(b);
    this.#pump();
  }

  /** The upstream closed its side: the end of a read-to-close body, or a failure. */
  ended(): void {
    if (!this.#gotBytes) {
      this.lost(null);
      return;
    }
    this.#pump();
  }

  /** The socket errored or closed under this call. */
  lost(err: Error | null): void {
    if (this.#phase === Phase.Done) return;
    const conn = this.#conn!;
    if (!this.#gotBytes && conn.served > 0 && !this.#retried && this.#replayable()) {
      // Most likely a keep-alive socket the upstream closed while it sat idle: once more, on a new socket.
      this.#retried = true;
      this.#detachStream();
      this.#conn = null;
      this.#phase = Phase.Waiting;
      this.origin.drop(conn);
      this.origin.acquire(this, true);
      return;
    }
    const code = (err as NodeJS.ErrnoException | null)?.code;
    this.fail(
      'error',
      err !== null && code !== undefined
        ? err
        : new UpstreamError('EUPSTREAM_CLOSED', 'upstream closed the connection', { cause: err ?? undefined }),
    );
  }

  #replayable(): boolean {
    const b = this.req.body;
    return IDEMPOTENT.has(this.req.method) && (b === null || Buffer.isBuffer(b));
  }

  #pump(): void {
    if (this.#pumping) return;
    const conn = this.#conn!;
    this.#pumping = true;
    try {
      while (!this.#paused && this.#phase !== Phase.Done) {
        const ev = conn.parser.next() ?? (conn.eof ? conn.parser.eof() : null);
        if (ev === null) break;
        if (ev.kind === 'data') {
          this.#deadline = Date.now() + this.origin.opts.bodyTimeoutMs;
          this.handler.onData(ev.chunk, this);
        } else if (ev.kind === 'head') {
          this.#phase = Phase.Body;
          this.#deadline = Date.now() + this.origin.opts.bodyTimeoutMs;
          if (ev.head.keepAliveMs !== null) conn.keepAliveMs = Math.min(conn.keepAliveMs, ev.head.keepAliveMs - 1_000);
          this.handler.onHead(ev.head, this);
        } else this.#complete(ev.keepAlive);
      }
    } catch (e) {
      if (!(e instanceof UpstreamParseError)) throw e;
      this.fail('error', e);
    } finally {
      this.#pumping = false;
    }
  }

  #complete(keepAlive: boolean): void {
    const conn = this.#conn!;
    this.#phase = Phase.Done;
    this.#detachStream();
    if (keepAlive && this.#sent && !conn.eof && conn.parser.buffered === 0 && conn.keepAliveMs > 0)
      this.origin.release(conn, Date.now());
    else this.origin.drop(conn);
    this.handler.onEnd();
  }

  checkDeadline(now: number): void {
    if (this.#paused || this.#phase === Phase.Done || now < this.#deadline) return;
    const what = this.#phase === Phase.Connect ? 'connect' : this.#phase === Phase.Headers ? 'headers' : 'body';
    this.fail('timeout', new UpstreamError(`EUPSTREAM_${what.toUpperCase()}_TIMEOUT`, `upstream ${what} timeout`));
  }

  fail(kind: 'timeout' | 'error', err: Error): void {
    if (this.#phase === Phase.Done) return;
    this.#stop();
    this.handler.onError(kind, err);
  }

  #stop(): void {
    this.#phase = Phase.Done;
    this.#detachStream();
    const conn = this.#conn;
    this.#conn = null;
    if (conn !== null) this.origin.drop(conn);
    else this.origin.unqueue(this);
  }

  /**
   * A body stream no longer sent upstream keeps flowing (and is dropped) so the client's upload does not stall;
   * also one the call never got to send (it failed while waiting or connecting), which nobody else will read.
   */
  #detachStream(): void {
    const b = this.req.body;
    if (b === null || Buffer.isBuffer(b)) return;
    if (this.#onStreamData !== null) {
      b.off('data', this.#onStreamData);
      this.#onStreamData = null;
    }
    if (!this.#sent) b.resume();
  }

  pause(): void {
    if (this.#paused) return;
    this.#paused = true;
    this.#conn?.socket.pause();
  }

  resume(): void {
    if (!this.#paused) return;
    this.#paused = false;
    if (this.#phase === Phase.Done) return;
    this.#deadline = Date.now() + this.origin.opts.bodyTimeoutMs;
    this.#conn?.socket.resume();
    this.#pump();
  }

  abort(_reason: Error): void {
    if (this.#phase === Phase.Done) return;
    this.#stop();
  }
}
