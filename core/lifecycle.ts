/**
 * How a long-running svc process learns it must stop: SIGTERM, SIGINT, or — when it was started by a supervisor
 * with an IPC channel (`npm start`, the gateway's multi-worker supervisor) — that channel closing, which is how a
 * child notices its supervisor died without a chance to signal it (kill -9). Without the last, such children
 * lingered as orphans with every port still serving.
 */
export function onStop(stop: (reason: string) => void): void {
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  if (process.send) process.on('disconnect', () => stop('supervisor gone'));
}
