/**
 * The gateway's fallback HTTP server: an HTTP/1.1 server over node:net, in JavaScript, implementing the subset of the
 * uWS API in http-api.ts with uWS's observable behaviour where the gateway's tests pin it (which requests are
 * dropped without an answer, how a repeated Content-Length is read, Expect: 100-continue, `res.end(body, true)`
 * closing the connection, the 10 s idle timeout, a header block cap read from UWS_HTTP_MAX_HEADERS_SIZE).
 * node:http is not used because its parser refuses a repeated identical Content-Length (RFC 9112 §6.3 lets a
 * server accept it, and uWS does), and because owning the parser keeps both servers answering the same bytes the
 * same way. It runs where no native uWS build loads (server-choice.ts); it costs more CPU per call (bench/).
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { HttpApp, HttpRequest, HttpResponse, HttpServerModule, ListenSocket, RouteHandler } from './http-api.js';

/** uWS closes an HTTP connection idle for this long (HTTP_IDLE_TIMEOUT_S). */
const IDLE_MS = 10_000;
/** uWS's default header block cap when UWS_HTTP_MAX_HEADERS_SIZE is unset. */
const DEFAULT_MAX_HEAD = 4 * 1024;
/** Pipelined bytes held while a response is in progress, before the socket is paused. */
const MAX_PENDING = 256 * 1024;
/** The methods uWS routes; any other request is dropped without an answer, as uWS does. */
const METHODS = new Set(['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'CONNECT', 'TRACE']);
/** uWS drops a request with more header lines than this (docs/gateway.md "Known limitations"). */
const MAX_HEADER_LINES = 48;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const BAD_VALUE = /[\0\r\n]/;
const CRLFCRLF = Buffer.from('\r\n\r\n');

/** Node >= 22.12 / 23.1 can listen with SO_REUSEPORT (several workers on one port, as uSockets does). */
export const FALLBACK_SHARES_PORT = (() => {
  const [maj = 0, min = 0] = process.versions.node.split('.').map(Number);
  return maj > 22 || (maj === 22 && min >= 12);
})();

let dateLine = '';
let dateSecond = 0;
function httpDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateLine = new Date(now).toUTCString();
  }
  return dateLine;
}

function maxHeadBytes(): number {
  const n = Number(process.env.UWS_HTTP_MAX_HEADERS_SIZE);
  return Number.isInteger(n) && n > 0 ? n : DEFAULT_MAX_HEAD;
}

class Request implements HttpRequest {
  constructor(
    private readonly method: string,
    private readonly path: string,
    private readonly query: string | undefined,
    private readonly headers: [string, string][],
  ) {}
  getMethod(): string {
    return this.method.toLowerCase();
  }
  getUrl(): string {
    return this.path;
  }
  getQuery(): string | undefined {
    return this.query;
  }
  forEach(cb: (key: string, value: string) => void): void {
    for (const [k, v] of this.headers) cb(k, v);
  }
}

/** One parsed request head: framing and connection semantics. */
interface Head {
  method: string;
  path: string;
  query: string | undefined;
  headers: [string, string][];
  /** -1: no Content-Length (or chunked). */
  length: number;
  chunked: boolean;
  keepAlive: boolean;
  expectContinue: boolean;
}

/** True when a LF not preceded by CR is in the bytes (RFC 9112 §2.2: this server does not accept bare LF). */
function bareLf(b: Buffer): boolean {
  for (let i = b.indexOf(10); i !== -1; i = b.indexOf(10, i + 1)) if (i === 0 || b[i - 1] !== 13) return true;
  return false;
}

/** Parses a header block (without its final CRLFCRLF); null when uWS would drop the request. */
function parseHead(text: string): Head | null {
  const lines = text.split('\r\n');
  if (lines.length - 1 > MAX_HEADER_LINES) return null;
  const first = lines[0]!;
  const sp1 = first.indexOf(' ');
  const sp2 = first.lastIndexOf(' ');
  if (sp1 <= 0 || sp2 <= sp1) return null;
  const method = first.slice(0, sp1);
  const target = first.slice(sp1 + 1, sp2);
  const version = first.slice(sp2 + 1);
  if (!METHODS.has(method) || (version !== 'HTTP/1.1' && version !== 'HTTP/1.0')) return null;
  if (target[0] !== '/' || /[\s\0]/.test(target)) return null; // origin-form only, as uWS
  const q = target.indexOf('?');
  const headers: [string, string][] = [];
  let length = -1;
  let chunked = false;
  let host = false;
  let connection = '';
  let expectContinue = false;
  // Framing the handler refuses (framing.ts: non-digit Content-Length, a coding other than chunked, both headers):
  // the request reaches it without a body, and the connection closes after its 400.
  let unframed = false;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(':');
    if (colon <= 0) return null; // also refuses obs-fold continuation lines
    const name = line.slice(0, colon).toLowerCase();
    if (!TOKEN.test(name)) return null;
    const value = line.slice(colon + 1).trim();
    if (BAD_VALUE.test(value)) return null;
    headers.push([name, value]);
    if (name === 'host') host = true;
    else if (name === 'content-length') {
      // Framing is read from the first one; the gateway refuses differing repeats itself (server.ts).
      if (!/^[0-9]{1,15}$/.test(value)) unframed = true;
      else if (length === -1) length = Number(value);
    } else if (name === 'transfer-encoding') {
      if (value.toLowerCase() !== 'chunked' || chunked) unframed = true; // framing unknowable: handler says 400
      chunked = true;
    } else if (name === 'connection') connection = value.toLowerCase();
    else if (name === 'expect' && value.toLowerCase() === '100-continue') expectContinue = true;
  }
  if (!host && version === 'HTTP/1.1') return null;
  if (chunked && length !== -1) unframed = true;
  if (unframed)
    return {
      method,
      path: q === -1 ? target : target.slice(0, q),
      query: q === -1 ? undefined : target.slice(q + 1),
      headers,
      length: 0,
      chunked: false,
      keepAlive: false,
      expectContinue: false,
    };
  const keepAlive =
    version === 'HTTP/1.1' ? !/(^|,)\s*close\s*(,|$)/.test(connection) : /(^|,)\s*keep-alive\s*(,|$)/.test(connection);
  return {
    method,
    path: q === -1 ? target : target.slice(0, q),
    query: q === -1 ? undefined : target.slice(q + 1),
    headers,
    length: chunked ? -1 : length,
    chunked,
    keepAlive,
    expectContinue,
  };
}

/** Incremental chunked-body decoder: returns the data bytes in `input`, and where the body ended (or -1). */
class ChunkedDecoder {
  #state: 'size' | 'data' | 'data-crlf' | 'trailer' = 'size';
  #left = 0;
  #line = '';
  failed = false;

  /** Calls `emit` for each data piece; returns the offset just past the body's end, or -1 if more is needed. */
  feed(input: Buffer, emit: (piece: Buffer) => void): number {
    let i = 0;
    while (i < input.length) {
      if (this.#state === 'data') {
        const n = Math.min(this.#left, input.length - i);
        emit(input.subarray(i, i + n));
        i += n;
        this.#left -= n;
        if (this.#left === 0) this.#state = 'data-crlf';
        continue;
      }
      const nl = input.indexOf(10, i);
      const end = nl === -1 ? input.length : nl + 1;
      this.#line += input.toString('latin1', i, end);
      i = end;
      if (this.#line.length > 4096) return this.#fail();
      if (nl === -1) break;
      if (!this.#line.endsWith('\r\n')) return this.#fail();
      const line = this.#line.slice(0, -2);
      this.#line = '';
      if (this.#state === 'data-crlf') {
        if (line !== '') return this.#fail();
        this.#state = 'size';
      } else if (this.#state === 'size') {
        const hex = line.split(';')[0]!.trim();
        if (!/^[0-9a-fA-F]{1,12}$/.test(hex)) return this.#fail();
        this.#left = Number.parseInt(hex, 16);
        this.#state = this.#left === 0 ? 'trailer' : 'data';
      } else if (line === '') return i; // trailer section ends: the body is through
    }
    return -1;
  }

  #fail(): number {
    this.failed = true;
    return -1;
  }
}

class Response implements HttpResponse {
  #status = '200 OK';
  #headers = '';
  #headSent = false;
  ended = false;
  aborted = false;
  #abortCb: (() => void) | undefined;
  #writableCb: ((offset: number) => boolean) | undefined;
  dataCb: ((chunk: ArrayBuffer, isLast: boolean) => void) | undefined;

  constructor(
    private readonly conn: Connection,
    private readonly socket: Socket,
  ) {}

  cork(cb: () => void): HttpResponse {
    this.socket.cork();
    try {
      cb();
    } finally {
      this.socket.uncork();
    }
    return this;
  }
  writeStatus(status: string): HttpResponse {
    this.#status = status;
    return this;
  }
  writeHeader(key: string, value: string): HttpResponse {
    this.#headers += `${key}: ${value}\r\n`;
    return this;
  }
  #head(framing: string, close = false): string {
    this.#headSent = true;
    const connection = close ? 'Connection: close\r\n' : '';
    return `HTTP/1.1 ${this.#status}\r\n${this.#headers}Date: ${httpDate()}\r\n${connection}${framing}\r\n`;
  }
  write(chunk: string | Uint8Array): boolean {
    if (this.ended || this.aborted) return true;
    const size = typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength;
    if (!this.#headSent) this.socket.write(this.#head('Transfer-Encoding: chunked\r\n'));
    if (size === 0) return !this.socket.writableNeedDrain;
    this.socket.write(`${size.toString(16)}\r\n`);
    this.socket.write(chunk);
    return this.socket.write('\r\n');
  }
  end(body?: string | Uint8Array, closeConnection = false): HttpResponse {
    if (this.ended || this.aborted) return this;
    const b = body ?? '';
    if (this.#headSent) {
      this.write(b);
      this.socket.write('0\r\n\r\n');
    } else {
      const size = typeof b === 'string' ? Buffer.byteLength(b) : b.byteLength;
      this.socket.write(this.#head(`Content-Length: ${size}\r\n`, closeConnection));
      if (size > 0) this.socket.write(b);
    }
    this.#ended(closeConnection);
    return this;
  }
  endWithoutBody(reportedContentLength?: number, closeConnection = false): HttpResponse {
    if (this.ended || this.aborted) return this;
    if (this.#headSent) this.socket.write('0\r\n\r\n');
    else
      this.socket.write(
        this.#head(
          reportedContentLength === undefined ? '' : `Content-Length: ${reportedContentLength}\r\n`,
          closeConnection,
        ),
      );
    this.#ended(closeConnection);
    return this;
  }
  #ended(close: boolean): void {
    this.ended = true;
    this.#writableCb = undefined;
    this.conn.responseEnded(close);
  }
  onWritable(handler: (offset: number) => boolean): HttpResponse {
    this.#writableCb = handler;
    return this;
  }
  onAborted(handler: () => void): HttpResponse {
    this.#abortCb = handler;
    return this;
  }
  onData(handler: (chunk: ArrayBuffer, isLast: boolean) => void): HttpResponse {
    this.dataCb = handler;
    return this;
  }
  pause(): void {
    this.conn.pauseBody();
  }
  resume(): void {
    this.conn.resumeBody();
  }
  close(): HttpResponse {
    if (this.ended || this.aborted) return this;
    this.ended = true;
    this.socket.destroy();
    return this;
  }
  /** The socket drained: uWS's onWritable. */
  drained(): void {
    const cb = this.#writableCb;
    if (!cb || this.ended || this.aborted) return;
    this.#writableCb = undefined;
    // A handler that returns false wants the next drain too (unless it registered a new one meanwhile).
    if (!cb(this.socket.bytesWritten) && this.#writableCb === undefined) this.#writableCb = cb;
  }
  /** The client went away before the response ended. */
  abort(): void {
    if (this.ended || this.aborted) return;
    this.aborted = true;
    this.#abortCb?.();
  }
}

/** One client connection: parses requests in order, one at a time (pipelined ones wait their turn). */
class Connection {
  #pending: Buffer | null = null;
  #res: Response | null = null;
  /** Body framing of the request being read: remaining bytes (length), a decoder (chunked), or done. */
  #bodyLeft = 0;
  #chunked: ChunkedDecoder | null = null;
  #bodyDone = true;
  #keepAlive = true;
  #closeAfter = false;
  #paused = false;
  #closed = false;

  constructor(
    private readonly socket: Socket,
    private readonly route: (method: string, path: string) => RouteHandler | undefined,
    private readonly maxHead: number,
  ) {
    socket.setNoDelay(true);
    socket.setTimeout(IDLE_MS, () => {
      // Like uWS: an idle connection closes; one whose response is still being produced does not.
      if (!this.#res || this.#res.ended) socket.destroy();
    });
    socket.on('data', (d: Buffer) => this.#onData(d));
    socket.on('drain', () => this.#res?.drained());
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      this.#closed = true;
      this.#res?.abort();
    });
  }

  #onData(d: Buffer): void {
    if (this.#closeAfter) return; // answered with `connection: close`: nothing more is read
    this.#pending = this.#pending ? Buffer.concat([this.#pending, d]) : d;
    this.#pump();
  }

  /** Processes buffered bytes as far as the current state allows. */
  #pump(): void {
    while (this.#pending && !this.#closed) {
      if (!this.#bodyDone) {
        if (this.#paused) return;
        this.#pending = this.#feedBody(this.#pending);
        continue;
      }
      // The next request waits until this response ended (no pipelined answers out of order).
      if (this.#res && !this.#res.ended) {
        if (this.#pending.length > MAX_PENDING) this.socket.pause();
        return;
      }
      if (this.#closeAfter) return;
      const end = this.#pending.indexOf(CRLFCRLF);
      if (end === -1) {
        // uWS drops a header block over its cap without an answer; a bare LF can never end a valid head: drop now.
        if (this.#pending.length > this.maxHead || bareLf(this.#pending)) this.socket.destroy();
        return;
      }
      if (end + 4 > this.maxHead) return void this.socket.destroy();
      const head = parseHead(this.#pending.toString('utf8', 0, end));
      const rest = this.#pending.subarray(end + 4);
      this.#pending = rest.length > 0 ? rest : null;
      if (!head) return void this.socket.destroy();
      this.#begin(head);
    }
  }

  #begin(h: Head): void {
    const res = new Response(this, this.socket);
    this.#res = res;
    this.#keepAlive = h.keepAlive;
    this.#chunked = h.chunked ? new ChunkedDecoder() : null;
    this.#bodyLeft = h.length > 0 ? h.length : 0;
    this.#bodyDone = !h.chunked && this.#bodyLeft === 0;
    if (h.expectContinue && !this.#bodyDone) this.socket.write('HTTP/1.1 100 Continue\r\n\r\n');
    const handler = this.route(h.method, h.path);
    if (!handler) {
      res.end('', !h.keepAlive);
      return;
    }
    handler(res, new Request(h.method, h.path, h.query, h.headers));
  }

  /** Feeds body bytes to the handler; returns what is left over (the next request's bytes) or null. */
  #feedBody(input: Buffer): Buffer | null {
    const res = this.#res!;
    const deliver = (piece: Buffer, isLast: boolean) => {
      if (!res.dataCb || res.aborted) return;
      // uWS hands out an ArrayBuffer valid only during the callback; a fresh copy is the honest equivalent.
      const ab = piece.buffer.slice(piece.byteOffset, piece.byteOffset + piece.length);
      res.dataCb(ab as ArrayBuffer, isLast);
    };
    if (this.#chunked) {
      const pieces: Buffer[] = [];
      const end = this.#chunked.feed(input, (p) => pieces.push(p));
      if (this.#chunked.failed) {
        this.socket.destroy();
        return null;
      }
      const done = end !== -1;
      for (let i = 0; i < pieces.length; i++) deliver(pieces[i]!, done && i === pieces.length - 1);
      if (!done) return null;
      if (pieces.length === 0) deliver(Buffer.alloc(0), true);
      this.#bodyDone = true;
      this.#afterRequest();
      return end < input.length ? input.subarray(end) : null;
    }
    const n = Math.min(this.#bodyLeft, input.length);
    this.#bodyLeft -= n;
    const last = this.#bodyLeft === 0;
    if (last) this.#bodyDone = true;
    deliver(input.subarray(0, n), last);
    if (last) this.#afterRequest();
    return n < input.length ? input.subarray(n) : null;
  }

  /** A request is through on both sides: close if asked, else read the next one. */
  #afterRequest(): void {
    if (!this.#bodyDone || !this.#res?.ended) return;
    if (this.#closeAfter || !this.#keepAlive) {
      this.#closeAfter = true;
      this.socket.end();
      return;
    }
    if (this.socket.isPaused() && !this.#paused) this.socket.resume();
  }

  responseEnded(close: boolean): void {
    if (close) {
      // Like uWS's end(body, true): the connection ends after this answer; unread body bytes are never parsed.
      this.#closeAfter = true;
      this.#pending = null;
      this.socket.end();
      return;
    }
    if (this.#bodyDone) {
      this.#afterRequest();
      if (!this.#closeAfter) queueMicrotask(() => this.#pump());
    }
  }

  pauseBody(): void {
    if (this.#paused) return;
    this.#paused = true;
    this.socket.pause();
  }

  resumeBody(): void {
    if (!this.#paused) return;
    this.#paused = false;
    this.socket.resume();
    queueMicrotask(() => this.#pump());
  }
}

interface Route {
  method: string | null;
  path: string | null;
  handler: RouteHandler;
}

class FallbackListenSocket {
  constructor(readonly server: Server) {}
}

class FallbackApp implements HttpApp {
  readonly #routes: Route[] = [];

  #add(method: string | null, pattern: string, handler: RouteHandler): HttpApp {
    this.#routes.push({ method, path: pattern === '/*' ? null : pattern, handler });
    return this;
  }
  get(pattern: string, handler: RouteHandler): HttpApp {
    return this.#add('GET', pattern, handler);
  }
  any(pattern: string, handler: RouteHandler): HttpApp {
    return this.#add(null, pattern, handler);
  }

  /** uWS matches exact routes before wildcards, whatever the order they were added in. */
  #route = (method: string, path: string): RouteHandler | undefined => {
    let wildcard: RouteHandler | undefined;
    for (const r of this.#routes) {
      if (r.method !== null && r.method !== method) continue;
      if (r.path === path) return r.handler;
      if (r.path === null) wildcard ??= r.handler;
    }
    return wildcard;
  };

  listen(host: string, port: number, cb: (listenSocket: ListenSocket | false) => void): HttpApp {
    const maxHead = maxHeadBytes();
    const server = createServer((socket) => void new Connection(socket, this.#route, maxHead));
    const onError = () => cb(false);
    server.once('error', onError);
    // uSockets sets SO_REUSEPORT for a fixed port only; so does this.
    server.listen({ host, port, reusePort: port !== 0 && FALLBACK_SHARES_PORT }, () => {
      server.off('error', onError);
      cb(new FallbackListenSocket(server));
    });
    return this;
  }
}

function serverOf(listenSocket: ListenSocket): Server {
  if (!(listenSocket instanceof FallbackListenSocket)) throw new TypeError('not a fallback listen socket');
  return listenSocket.server;
}

export const fallbackServer: HttpServerModule = {
  App: () => new FallbackApp(),
  us_socket_local_port(listenSocket) {
    const a = serverOf(listenSocket).address();
    return typeof a === 'object' && a ? a.port : 0;
  },
  us_listen_socket_close(listenSocket) {
    serverOf(listenSocket).close();
  },
};
