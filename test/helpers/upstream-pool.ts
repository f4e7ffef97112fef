/** One call through the gateway's upstream pool (core/http1/), collected: for unit tests of the client. */
import type { Readable } from 'node:stream';
import { collect, type UpstreamPool } from '../../core/http1/pool.js';
import type { Headers } from '../../gateway/respond.js';

export interface PoolAnswer {
  status: number;
  headers: Headers;
  body: string;
}

/** `collect` with the test's defaults (GET /, no headers, no body) and the body as text; a failure carries `kind`. */
export async function callVia(
  pool: UpstreamPool,
  origin: string,
  opts: { method?: string; path?: string; headers?: Record<string, string>; body?: Buffer | Readable | null } = {},
): Promise<PoolAnswer> {
  const r = await collect(pool, origin, {
    method: opts.method ?? 'GET',
    path: opts.path ?? '/',
    headers: opts.headers ?? {},
    body: opts.body ?? null,
  });
  return { status: r.status, headers: r.headers, body: r.body.toString('utf8') };
}
