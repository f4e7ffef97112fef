/**
 * A request body streamed from uWS into the upstream call with backpressure: chunks are copied out of uWS's
 * transient ArrayBuffers and pushed; when the consumer lags, the client socket is paused (res.pause) until
 * the upstream client reads again. Over the size cap the stream fails and the call is answered 413, not charged.
 */
import { Readable } from 'node:stream';
import type { HttpResponse } from './http-api.js';

/** How much of a refused body we still read (and drop) so the client gets to read the answer. */
export const DRAIN_BYTES = 1024 * 1024;
const DRAIN_MS = 2_000;

/**
 * Reads and drops the rest of a refused body; `done` settles when it is through. Clients that write the whole body
 * before they read (fetch, curl) see EPIPE instead of our 413 when the socket closes under their write. Past
 * DRAIN_BYTES or DRAIN_MS it gives up: `done` settles false and the answer must close the connection.
 */
export class BodyDrain {
  readonly done: Promise<boolean>;
  #settle!: (complete: boolean) => void;
  #left = DRAIN_BYTES;
  readonly #timer: NodeJS.Timeout;

  constructor() {
    this.done = new Promise((resolve) => {
      this.#settle = resolve;
    });
    this.#timer = setTimeout(() => this.#finish(false), DRAIN_MS);
    this.#timer.unref();
  }

  feed(byteLength: number, isLast: boolean): void {
    this.#left -= byteLength;
    if (isLast) this.#finish(true);
    else if (this.#left < 0) this.#finish(false);
  }

  #finish(complete: boolean): void {
    clearTimeout(this.#timer);
    this.#settle(complete); // a promise settles once: later calls are no-ops
  }
}

export class RequestBody extends Readable {
  /** Set when the body went over the cap; from then on the rest is drained (see BodyDrain) rather than streamed. */
  overflow: BodyDrain | null = null;
  /** Set once the upstream request took the stream; an untaken stream is discarded after the answer. */
  taken = false;
  #size = 0;
  #paused = false;

  constructor(
    private readonly res: Pick<HttpResponse, 'pause' | 'resume'>,
    private readonly maxBytes: number,
    private readonly isOpen: () => boolean,
  ) {
    super({ highWaterMark: 256 * 1024 });
    // An overflow fails the stream whether or not a consumer took it yet: on PostgreSQL the pipeline awaits the key,
    // lease and claim round trips first, so a fast oversized body overflows before the upstream call listens. The
    // failure is read from `overflow` (pipeline.ts) and by consumers that attach later (`errored`, core/http1/call.ts);
    // without a listener of its own the 'error' event would crash the gateway process.
    this.on('error', ignoreError);
  }

  /** uWS onData callback. */
  feed(ab: ArrayBuffer, isLast: boolean): void {
    if (this.overflow) {
      this.overflow.feed(ab.byteLength, isLast);
      return;
    }
    if (this.destroyed) return;
    this.#size += ab.byteLength;
    if (this.#size > this.maxBytes) {
      this.overflow = new BodyDrain();
      this.overflow.feed(0, isLast);
      this.destroy(new Error('request body exceeds SVC_GATEWAY_MAX_REQUEST_BYTES'));
      return;
    }
    const more = this.push(Buffer.from(ab.slice(0)));
    if (isLast) {
      this.push(null);
      // A chunked body's chunks arrive several per socket read: one of them may have paused the socket in the same
      // read that ended the body, and an ended stream never asks for more (_read), so nothing else would resume it.
      this.release();
    } else if (!more && !this.#paused && this.isOpen()) {
      this.#paused = true;
      this.res.pause();
    }
  }

  override _read(): void {
    this.release();
  }

  /**
   * Lets the client socket flow again if this body paused it. Needed before the body's end or the answer's: uWS
   * stops reading a paused socket altogether, so a keep-alive connection left paused never reads its next request
   * and is reset at uWS's idle timeout. Resumed as the answer ends, uWS reads on: the body's unread rest (dropped
   * here once the body is discarded), then the connection's next request.
   */
  release(): void {
    if (!this.#paused || !this.isOpen()) return;
    this.#paused = false;
    this.res.resume();
  }

  /** Nobody will read this body (the call was refused): drop it and let the socket flow again. */
  discard(): void {
    this.destroy();
    try {
      this.release();
    } catch {
      /* response already finished */
    }
  }
}

function ignoreError(): void {}

/** Reads a whole body (idempotent calls hash it), honouring the stream's own cap. */
export async function collectBody(body: RequestBody): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of body) parts.push(c as Buffer);
  return Buffer.concat(parts);
}
