/**
 * The gateway's only writer of HTTP responses (uWS): problem+json for our refusals, whole bodies, and
 * streamed upstream bodies with backpressure. Every write after an await checks `aborted` and is corked.
 */
import type { HttpResponse } from './http-api.js';
import { STATUS_CODES } from 'node:http';
import type { SvcError } from '../core/errors.js';
import { PROBLEM_CONTENT_TYPE, problemOf } from '../core/problem.js';
import { restNextStep } from '../core/next-step.js';
import type { Headers } from '../core/http1/response-parser.js';

const STATUS_LINE: string[] = [];
for (const [code, text] of Object.entries(STATUS_CODES)) STATUS_LINE[Number(code)] = `${code} ${text ?? ''}`;
export function statusLine(status: number): string {
  return STATUS_LINE[status] ?? `${status} Status`;
}

/** Header fields as the pipeline builds them: the upstream client's own shape. */
export type { Headers };

/** What the pipeline needs from the client connection: nothing uWS-specific leaks past this interface. */
export interface ClientSink {
  readonly aborted: boolean;
  readonly isHead: boolean;
  onAbort(cb: () => void): void;
  /** `padTo`: pad the body with JSON whitespace to at least this many bytes (framing.ts FRAMING_ANSWER_PAD). */
  problem(err: SvcError, requestId: string, headers: Headers, padTo?: number): void;
  send(status: number, headers: Headers, body: Buffer | string): void;
  /** Status and headers now, body to follow with write()/end() (chunked). */
  begin(status: number, headers: Headers): void;
  /** False when the socket is backpressured: wait for onWritable before writing more. */
  write(chunk: Buffer): boolean;
  onWritable(cb: () => void): void;
  end(): void;
  close(): void;
}

export class UwsSink implements ClientSink {
  aborted = false;
  /** The answer's status, and whether svc itself answered (a problem) rather than relaying the upstream (metrics). */
  status = 0;
  own = false;
  #abortCb: (() => void) | undefined;
  #writableCb: (() => void) | undefined;

  #onFinish: (() => void) | undefined;
  #beforeEnd: (() => void) | undefined;

  /** `onFinish` runs once, when the response ended, was closed or the client aborted (drain accounting). */
  constructor(
    private readonly res: HttpResponse,
    readonly isHead: boolean,
    onFinish?: () => void,
  ) {
    this.#onFinish = onFinish;
    res.onAborted(() => {
      this.aborted = true;
      this.#finish();
      this.#abortCb?.();
    });
  }

  #finish(): void {
    const f = this.#onFinish;
    this.#onFinish = undefined;
    f?.();
  }

  onAbort(cb: () => void): void {
    this.#abortCb = cb;
  }

  /** `cb` runs right before the answer ends (a streamed request body resumes its socket: request-body.ts). */
  beforeEnd(cb: () => void): void {
    this.#beforeEnd = cb;
  }

  problem(err: SvcError, requestId: string, headers: Headers, padTo = 0): void {
    // An upstream that failed or timed out is the upstream's failure, even though svc words the answer.
    this.own = err.code !== 'upstream_error' && err.code !== 'upstream_timeout';
    const h: Headers = [['content-type', PROBLEM_CONTENT_TYPE], ...headers];
    // Our refusals are never charged; every one says so (docs/gateway.md "Response headers").
    if (!headers.some((e) => e[0] === 'x-svc-charged-cents')) h.push(['x-svc-charged-cents', '0']);
    if (err.retryAfter !== undefined) h.push(['retry-after', String(err.retryAfter)]);
    const body = JSON.stringify(problemOf(err, requestId, restNextStep));
    this.send(err.status, h, body.length < padTo ? body.padEnd(padTo, ' ') : body);
  }

  send(status: number, headers: Headers, body: Buffer | string): void {
    if (this.aborted) return;
    this.status = status;
    const res = this.res;
    // A `connection: close` answer (framing refused, oversized body) must really end the socket: uWS keeps it open
    // unless told, and unread body bytes would then parse as the next request.
    let close = false;
    this.#beforeEnd?.();
    res.cork(() => {
      res.writeStatus(statusLine(status));
      for (const [k, v] of headers) {
        if (k === 'connection' && v === 'close') close = true;
        else res.writeHeader(k, v);
      }
      if (this.isHead) res.endWithoutBody(typeof body === 'string' ? Buffer.byteLength(body) : body.length, close);
      else res.end(body, close);
    });
    this.aborted = true;
    this.#finish();
  }

  begin(status: number, headers: Headers): void {
    if (this.aborted) return;
    this.status = status;
    const res = this.res;
    res.cork(() => {
      res.writeStatus(statusLine(status));
      for (const [k, v] of headers) res.writeHeader(k, v);
    });
  }

  write(chunk: Buffer): boolean {
    if (this.aborted) return true;
    let ok = true;
    this.res.cork(() => {
      ok = this.res.write(chunk);
    });
    return ok;
  }

  onWritable(cb: () => void): void {
    this.#writableCb = cb;
    this.res.onWritable(() => {
      const f = this.#writableCb;
      this.#writableCb = undefined;
      f?.();
      return true;
    });
  }

  end(): void {
    if (this.aborted) return;
    this.#beforeEnd?.();
    this.res.cork(() => {
      if (this.isHead) this.res.endWithoutBody();
      else this.res.end();
    });
    this.aborted = true;
    this.#finish();
  }

  close(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.res.close();
    this.#finish();
  }
}
