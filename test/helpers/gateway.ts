/**
 * Starts the compiled gateway (dist/gateway/main.js) as a real process over a test data dir and waits for its
 * ready line. With `workers > 1` the gateway supervises N worker processes sharing one port (SO_REUSEPORT).
 */
import { FALLBACK_SHARES_PORT } from '../../gateway/http-fallback.js';
import { baseEnv, startProcess, type RunningProcess } from './processes.js';

/**
 * The HTTP server this run's gateways are expected to run (server-choice.ts): `fallback` when the run forces it
 * (SVC_GATEWAY_SERVER=fallback) or when .ci/run says this Node has no native build (SVC_TEST_EXPECT_SERVER).
 */
export const EXPECTED_SERVER: 'native' | 'fallback' =
  process.env.SVC_TEST_EXPECT_SERVER === 'fallback' || process.env.SVC_GATEWAY_SERVER === 'fallback'
    ? 'fallback'
    : 'native';

/** Several workers on one port: native uWS anywhere, the fallback from Node 22.12 (SO_REUSEPORT in node:net). */
export const WORKERS_SHARE_PORT = EXPECTED_SERVER === 'native' || FALLBACK_SHARES_PORT;

export interface RunningGateway extends RunningProcess {
  /** Worker pids (the gateway's own pid with one worker). */
  workerPids: number[];
}

export async function startGateway(
  dataDir: string,
  env: Record<string, string> = {},
  opts: { workers?: number; timeoutMs?: number } = {},
): Promise<RunningGateway> {
  const full = baseEnv(dataDir, { SVC_GATEWAY_WORKERS: String(opts.workers ?? 1), ...env });
  // SVC_GATEWAY_EXEC_ARGV: extra node flags for the gateway process (e.g. --cpu-prof when profiling).
  const execArgv = (env.SVC_GATEWAY_EXEC_ARGV ?? '').split(' ').filter(Boolean);
  const p = await startProcess('gateway', 'gateway/main.js', full, {
    execArgv,
    ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}),
  });
  const workers = p.ready.workers;
  return { ...p, workerPids: Array.isArray(workers) ? workers.map(Number) : [p.child.pid!] };
}
