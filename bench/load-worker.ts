/**
 * One autocannon run in its own (pinned) process: argv[2] is a JSON LoadSpec; prints one JSON LoadResult.
 * Kept out of the orchestrator so the load generator's CPU is its own and can sit on the upstream's core.
 */
import autocannon from 'autocannon';

export interface LoadSpec {
  url: string;
  connections: number;
  durationSec: number;
  headers: Record<string, string>;
  /** Fixed total request rate (req/s) instead of as fast as possible. */
  rate?: number;
}

export interface LoadResult {
  responses: number;
  rps: number;
  /** autocannon latency is whole milliseconds; good enough under load, wrk measures the fine numbers. */
  p50Ms: number;
  p99Ms: number;
  statusCounts: Record<string, number>;
  errors: number;
  timeouts: number;
  durationSec: number;
}

async function _main(): Promise<void> {
  const spec = JSON.parse(process.argv[2] ?? '{}') as LoadSpec;
  const r = await autocannon({
    url: spec.url,
    connections: spec.connections,
    duration: spec.durationSec,
    headers: spec.headers,
    pipelining: 1,
    ...(spec.rate ? { overallRate: spec.rate } : {}),
  });
  const statusCounts: Record<string, number> = {};
  for (const [code, v] of Object.entries(r.statusCodeStats ?? {})) statusCounts[code] = v.count ?? 0;
  const responses = r['1xx'] + r['2xx'] + r['3xx'] + r['4xx'] + r['5xx'];
  const out: LoadResult = {
    responses,
    rps: responses / r.duration,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    statusCounts,
    errors: r.errors,
    timeouts: r.timeouts,
    durationSec: r.duration,
  };
  process.stdout.write(JSON.stringify(out) + '\n');
}

void _main();
