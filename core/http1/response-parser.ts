/**
 * An HTTP/1.1 response parser for the upstream client, strict where a lenient parser lets a hostile upstream smuggle
 * or confuse framing: bare CR or LF, obs-fold, invalid header names or values, repeated Content-Length, Content-Length
 * with Transfer-Encoding, any transfer coding but `chunked`, malformed chunk lines. A pull parser (`next()` yields one
 * event at a time) so that the caller can stop between any two events (backpressure) and go on later.
 */
/** Header fields in order, lower-case names, repeats kept (the gateway's answers use the same shape: respond.ts). */
export type Headers = [string, string][];

/** The first value of a header by its lower-case name, or undefined. */
export function fieldValue(h: Headers, name: string): string | undefined {
  for (const [k, v] of h) if (k === name) return v;
  return undefined;
}

/** Why an upstream answer was refused; `reason` is a stable snake_case word (tests, logs). */
export class UpstreamParseError extends Error {
  readonly code = 'EUPSTREAM_PROTOCOL';
  constructor(readonly reason: string) {
    super(`invalid upstream response: ${reason}`);
    this.name = 'UpstreamParseError';
  }
}

export interface ResponseHead {
  status: number;
  /** Lower-case names, in order, repeats kept. */
  headers: Headers;
  /** The declared length, or null (chunked, read to close, or no body). */
  contentLength: number | null;
  /** The connection may carry another request after this answer (HTTP/1.1 without `Connection: close`). */
  keepAlive: boolean;
  /** `Keep-Alive: timeout=N` of the upstream, in ms, when it sent one. */
  keepAliveMs: number | null;
}

export type ParseEvent =
  | { kind: 'head'; head: ResponseHead }
  | { kind: 'data'; chunk: Buffer }
  | { kind: 'end'; keepAlive: boolean };

export interface ParserLimits {
  /** Status line plus headers, bytes (also the bound for a chunked body's trailers). */
  maxHeaderBytes: number;
  maxHeaderCount: number;
}

/** Per byte: 1 = token character (header names), 2 = field value character (VCHAR, obs-text, SP, HTAB). */
const CHARS = new Uint8Array(256);
for (let c = 0x20; c < 0x100; c++) if (c !== 0x7f) CHARS[c] = 2;
CHARS[9] = 2;
for (const c of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
  CHARS[c.charCodeAt(0)] = 3;

function _isToken(s: string, end: number): boolean {
  for (let i = 0; i < end; i++) if ((CHARS[s.charCodeAt(i)]! & 1) === 0) return false;
  return true;
}

/** Field value: visible ASCII, obs-text, SP and HTAB; no other control character (CR, LF and NUL included). */
function _isFieldValue(s: string): boolean {
  for (let i = 0; i < s.length; i++) if ((CHARS[s.charCodeAt(i)]! & 2) === 0) return false;
  return true;
}
const STATUS_LINE = /^HTTP\/1\.([01]) ([1-5]\d\d)(?: [\t\x20-\x7e\x80-\xff]*)?$/;
const CHUNK_LINE = /^([0-9a-fA-F]{1,12})[ \t]*(?:;[\t\x20-\x7e\x80-\xff]*)?$/;
const LENGTH = /^\d{1,15}$/;
const MAX_CHUNK_LINE = 1024;

const enum State {
  Head,
  Length,
  ChunkLine,
  ChunkData,
  ChunkEnd,
  Trailers,
  Close,
  Done,
}

export class ResponseParser {
  #buf: Buffer = Buffer.alloc(0);
  /** `#buf` is a view of `#store` (this parser's own memory, with room after `#buf` to append into). */
  #own = false;
  #store: Buffer = this.#buf;
  #pos = 0;
  /** Head and trailers: where the search for the next LF goes on, and where the current line starts. */
  #scan = 0;
  #lineStart = 0;
  #state = State.Done;
  #remaining = 0;
  #noBody = false;
  #keepAlive = false;

  constructor(private readonly limits: ParserLimits) {}

  /** Expect a new answer; `noBody` for a HEAD request (the answer's framing headers describe a body never sent). */
  start(noBody: boolean): void {
    this.#state = State.Head;
    this.#noBody = noBody;
    this.#scan = this.#pos;
    this.#lineStart = this.#pos;
  }

  push(chunk: Buffer): void {
    if (this.#pos >= this.#buf.length) {
      this.#buf = chunk;
      this.#own = false;
      this.#scan -= this.#pos;
      this.#lineStart -= this.#pos;
      this.#pos = 0;
      return;
    }
    // An unfinished line (head, chunk size, trailers) waits for more bytes. Copying it afresh on every read made a
    // head trickled in one byte per read cost O(n^2) (~100 ms of event loop for 15 KB): the bytes go into a store
    // with room to spare instead, and a full store is replaced by one twice the size. Bytes already handed on as
    // views (`#take`) lie before the end of `#buf` and are never written over: appending only writes past it.
    const end = this.#buf.byteOffset + this.#buf.length;
    if (this.#own && end + chunk.length <= this.#store.byteOffset + this.#store.length) {
      chunk.copy(this.#store, end - this.#store.byteOffset);
      this.#buf = this.#store.subarray(
        this.#buf.byteOffset - this.#store.byteOffset,
        end - this.#store.byteOffset + chunk.length,
      );
      return;
    }
    const rest = this.#buf.length - this.#pos;
    const store = Buffer.allocUnsafeSlow(Math.max(2 * (rest + chunk.length), 1024));
    this.#buf.copy(store, 0, this.#pos);
    chunk.copy(store, rest);
    this.#store = store;
    this.#own = true;
    this.#buf = store.subarray(0, rest + chunk.length);
    this.#scan -= this.#pos;
    this.#lineStart -= this.#pos;
    this.#pos = 0;
  }

  /** Bytes received and not yet consumed (after `end`: bytes the upstream sent past its answer). */
  get buffered(): number {
    return this.#buf.length - this.#pos;
  }

  get done(): boolean {
    return this.#state === State.Done;
  }

  /** The next event, or null when more input is needed. Throws UpstreamParseError. */
  next(): ParseEvent | null {
    for (;;) {
      switch (this.#state) {
        case State.Head: {
          const head = this.#head();
          if (head === null) return null;
          if (head.status < 200) {
            // 1xx: an interim answer with no body; the real one follows (101 is an upgrade we never ask for).
            if (head.status === 101) throw new UpstreamParseError('unexpected_upgrade');
            this.start(this.#noBody);
            continue;
          }
          return { kind: 'head', head };
        }
        case State.Length:
          return this.#remaining === 0 ? this.#finish() : this.#take();
        case State.Close: {
          if (this.#pos >= this.#buf.length) return null;
          const chunk = this.#pos === 0 ? this.#buf : this.#buf.subarray(this.#pos);
          this.#pos = this.#buf.length;
          return { kind: 'data', chunk };
        }
        case State.ChunkLine: {
          const line = this.#line(MAX_CHUNK_LINE, 'chunk_line_too_long');
          if (line === null) return null;
          const m = CHUNK_LINE.exec(line);
          if (!m) throw new UpstreamParseError('invalid_chunk_size');
          this.#remaining = Number.parseInt(m[1]!, 16);
          if (this.#remaining === 0) {
            this.#state = State.Trailers;
            this.#scan = this.#lineStart = this.#pos;
          } else this.#state = State.ChunkData;
          continue;
        }
        case State.ChunkData: {
          const ev = this.#take();
          if (this.#remaining === 0) this.#state = State.ChunkEnd;
          return ev;
        }
        case State.ChunkEnd: {
          if (this.#buf.length - this.#pos < 2) return null;
          if (this.#buf[this.#pos] !== 13 || this.#buf[this.#pos + 1] !== 10)
            throw new UpstreamParseError('invalid_chunk_end');
          this.#pos += 2;
          this.#state = State.ChunkLine;
          this.#scan = this.#lineStart = this.#pos;
          continue;
        }
        case State.Trailers: {
          // Trailers are read (bounded like headers, same line rules) and dropped: the relay never forwards them.
          for (;;) {
            const line = this.#line(this.limits.maxHeaderBytes, 'trailers_too_large');
            if (line === null) return null;
            if (line === '') return this.#finish();
            const c0 = line.charCodeAt(0);
            if (c0 === 32 || c0 === 9) throw new UpstreamParseError('obs_fold');
            if (line.indexOf('\r') >= 0) throw new UpstreamParseError('bare_cr');
          }
        }
        case State.Done:
          return null;
      }
    }
  }

  /** The upstream closed the connection: the end of a read-to-close body, or an error anywhere else. */
  eof(): ParseEvent {
    if (this.#state === State.Close) {
      this.#state = State.Done;
      return { kind: 'end', keepAlive: false };
    }
    throw new UpstreamParseError(this.#state === State.Head ? 'closed_before_headers' : 'closed_mid_body');
  }

  /** Body bytes at hand, up to what the length or chunk still owes (zero-copy views of the socket's buffers). */
  #take(): ParseEvent | null {
    const avail = this.#buf.length - this.#pos;
    if (avail === 0) return null;
    const n = avail < this.#remaining ? avail : this.#remaining;
    const chunk = this.#buf.subarray(this.#pos, this.#pos + n);
    this.#pos += n;
    this.#remaining -= n;
    return { kind: 'data', chunk };
  }

  #finish(): ParseEvent {
    this.#state = State.Done;
    return { kind: 'end', keepAlive: this.#keepAlive };
  }

  /**
   * One CRLF-terminated line from #pos (without the CRLF), or null when it has not all arrived. `max` bounds the
   * bytes since #lineStart: one chunk line, or the whole trailer section (#lineStart stays at its start).
   */
  #line(max: number, tooLong: string): string | null {
    const lf = this.#buf.indexOf(10, this.#scan);
    if (lf < 0) {
      this.#scan = this.#buf.length;
      if (this.#buf.length - this.#lineStart > max) throw new UpstreamParseError(tooLong);
      return null;
    }
    if (lf === this.#pos || this.#buf[lf - 1] !== 13) throw new UpstreamParseError('bare_lf');
    if (lf + 1 - this.#lineStart > max) throw new UpstreamParseError(tooLong);
    const line = this.#buf.toString('latin1', this.#pos, lf - 1);
    this.#pos = lf + 1;
    this.#scan = this.#pos;
    if (this.#state !== State.Trailers) this.#lineStart = this.#pos;
    return line;
  }

  /** Status line and headers once the empty line has arrived, else null. */
  #head(): ResponseHead | null {
    const buf = this.#buf;
    const start = this.#pos;
    let i = this.#scan;
    for (;;) {
      const lf = buf.indexOf(10, i);
      if (lf < 0) {
        this.#scan = buf.length;
        if (buf.length - start > this.limits.maxHeaderBytes) throw new UpstreamParseError('headers_too_large');
        return null;
      }
      if (lf === start || buf[lf - 1] !== 13) throw new UpstreamParseError('bare_lf');
      if (lf + 1 - start > this.limits.maxHeaderBytes) throw new UpstreamParseError('headers_too_large');
      if (lf - 1 === this.#lineStart) {
        this.#pos = lf + 1;
        this.#scan = this.#lineStart = this.#pos;
        return this.#headOf(buf.toString('latin1', start, lf - 1));
      }
      this.#lineStart = i = lf + 1;
    }
  }

  #headOf(text: string): ResponseHead {
    // `text` is every line of the head, each followed by CRLF; any other CR is bare.
    let eol = text.indexOf('\r\n');
    if (eol <= 0) throw new UpstreamParseError('invalid_status_line');
    const statusLine = text.slice(0, eol);
    const m = STATUS_LINE.exec(statusLine);
    if (!m) throw new UpstreamParseError(statusLine.indexOf('\r') >= 0 ? 'bare_cr' : 'invalid_status_line');
    const http11 = m[1] === '1';
    const status = Number(m[2]);
    const headers: Headers = [];
    let length: string | null = null;
    let te: string | null = null;
    let close = !http11;
    let keepAliveMs: number | null = null;
    for (let from = eol + 2; from < text.length; from = eol + 2) {
      eol = text.indexOf('\r\n', from);
      const line = text.slice(from, eol);
      if (headers.length === this.limits.maxHeaderCount) throw new UpstreamParseError('too_many_headers');
      const c0 = line.charCodeAt(0);
      if (c0 === 32 || c0 === 9) throw new UpstreamParseError('obs_fold');
      const colon = line.indexOf(':');
      if (colon <= 0) throw new UpstreamParseError('invalid_header_line');
      if (!_isToken(line, colon)) throw new UpstreamParseError('invalid_header_name');
      const value = _trimOws(line, colon + 1);
      if (!_isFieldValue(value))
        throw new UpstreamParseError(value.indexOf('\r') >= 0 ? 'bare_cr' : 'invalid_header_value');
      const name = line.slice(0, colon).toLowerCase();
      if (name === 'content-length') {
        // Repeated, even with equal values, is refused: the relay must never guess which framing the sender meant.
        if (length !== null) throw new UpstreamParseError('duplicate_content_length');
        if (!LENGTH.test(value)) throw new UpstreamParseError('invalid_content_length');
        length = value;
      } else if (name === 'transfer-encoding') te = te === null ? value : `${te}, ${value}`;
      else if (name === 'connection') {
        const v = value.toLowerCase();
        if (v.includes('close')) close = true;
        else if (!http11 && v.includes('keep-alive')) close = false;
      } else if (name === 'keep-alive') {
        const t = /(?:^|[,\s])timeout=(\d{1,6})/i.exec(value);
        if (t) keepAliveMs = Number(t[1]) * 1000;
      }
      headers.push([name, value]);
    }
    let contentLength: number | null = null;
    if (te !== null && length !== null) throw new UpstreamParseError('content_length_with_transfer_encoding');
    if (status < 200) {
      // No body, whatever the headers say.
    } else if (this.#noBody || status === 204 || status === 304) {
      this.#state = State.Length;
      this.#remaining = 0;
      if (length !== null) contentLength = Number(length);
    } else if (te !== null) {
      if (te.toLowerCase() !== 'chunked') throw new UpstreamParseError('unsupported_transfer_encoding');
      this.#state = State.ChunkLine;
    } else if (length !== null) {
      contentLength = Number(length);
      this.#state = State.Length;
      this.#remaining = contentLength;
    } else {
      this.#state = State.Close;
      close = true;
    }
    this.#keepAlive = !close;
    return { status, headers, contentLength, keepAlive: !close, keepAliveMs };
  }
}

/** The field value after `from` without leading and trailing SP/HTAB (String.trim would also eat a bare CR). */
function _trimOws(line: string, from: number): string {
  let a = from;
  let b = line.length;
  while (a < b && (line.charCodeAt(a) === 32 || line.charCodeAt(a) === 9)) a++;
  while (b > a && (line.charCodeAt(b - 1) === 32 || line.charCodeAt(b - 1) === 9)) b--;
  return line.slice(a, b);
}
