/** One call through the gateway's upstream pool (core/http1/), collected: for unit tests of the client. */
import type { Readable } from 'node:stream';
import type { UpstreamPool } from '../../core/http1/pool.js';
import type { Headers } from '../../gateway/respond.js';

export interface PoolAnswer {
  status: number;
  headers: Headers;
  body: string;
}

export function callVia(
  pool: UpstreamPool,
  origin: string,
  opts: { method?: string; path?: string; headers?: Record<string, string>; body?: Buffer | Readable | null } = {},
): Promise<PoolAnswer> {
  return new Promise((resolve, reject) => {
    let status = 0;
    let headers: Headers = [];
    const parts: Buffer[] = [];
    pool.request(
      origin,
      { method: opts.method ?? 'GET', path: opts.path ?? '/', headers: opts.headers ?? {}, body: opts.body ?? null },
      {
        onHead(h) {
          status = h.status;
          headers = h.headers;
        },
        onData(c) {
          parts.push(c);
        },
        onEnd() {
          resolve({ status, headers, body: Buffer.concat(parts).toString('utf8') });
        },
        onError(kind, err) {
          reject(Object.assign(err, { kind }));
        },
      },
    );
  });
}
