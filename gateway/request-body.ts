/**
 * A request body streamed from uWS into the upstream call with backpressure: chunks are copied out of uWS's
 * transient ArrayBuffers and pushed; when the consumer lags, the client socket is paused (res.pause) until
 * undici reads again. Over the size cap the stream fails and the call is answered 413, not charged.
 */
import { Readable } from 'node:stream';
import type { HttpResponse } from 'uWebSockets.js';

export class RequestBody extends Readable {
  overflow = false;
  /** Set once the upstream request took the stream; an untaken stream is discarded after the answer. */
  taken = false;
  #size = 0;
  #paused = false;

  constructor(
    private readonly res: HttpResponse,
    private readonly maxBytes: number,
    private readonly isOpen: () => boolean,
  ) {
    super({ highWaterMark: 256 * 1024 });
  }

  /** uWS onData callback. */
  feed(ab: ArrayBuffer, isLast: boolean): void {
    if (this.destroyed) return;
    this.#size += ab.byteLength;
    if (this.#size > this.maxBytes) {
      this.overflow = true;
      this.destroy(new Error('request body exceeds SVC_GATEWAY_MAX_REQUEST_BYTES'));
      return;
    }
    const more = this.push(Buffer.from(ab.slice(0)));
    if (isLast) this.push(null);
    else if (!more && !this.#paused && this.isOpen()) {
      this.#paused = true;
      this.res.pause();
    }
  }

  override _read(): void {
    if (this.#paused && this.isOpen()) {
      this.#paused = false;
      this.res.resume();
    }
  }

  /** Nobody will read this body (the call was refused): drop it and let the socket flow again. */
  discard(): void {
    this.destroy();
    if (this.#paused && this.isOpen()) {
      this.#paused = false;
      try {
        this.res.resume();
      } catch {
        /* response already finished */
      }
    }
  }
}

/** Reads a whole body (idempotent calls hash it), honouring the stream's own cap. */
export async function collectBody(body: RequestBody): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of body) parts.push(c as Buffer);
  return Buffer.concat(parts);
}
