/**
 * Starts the compiled gateway (dist/gateway/main.js) as a real process over a test data dir and waits for its
 * ready line. With `workers > 1` the gateway supervises N worker processes sharing one port (SO_REUSEPORT).
 */
import { baseEnv, startProcess, type RunningProcess } from './processes.js';

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
