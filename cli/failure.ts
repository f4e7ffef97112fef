/**
 * The CLI's one failure type. `usage` failures (unknown flag, missing argument) exit 2 and never reach the network;
 * a person's Ctrl-C in a prompt (`cancelled`) exits 130 as a shell does for SIGINT; every other failure exits 1.
 * `next` is one command a person (or agent) can run to get unstuck. `requestId` is the server's request id (for a
 * support request); `data` is what the command still has to show (the upstream's answer of a `svc call` that exits
 * 1 with `upstream_status`).
 */
export type FailureKind = 'usage' | 'api' | 'cancelled';

export class CliFailure extends Error {
  constructor(
    readonly kind: FailureKind,
    readonly code: string,
    message: string,
    readonly status: number | null = null,
    readonly next: string | null = null,
    readonly requestId: string | null = null,
    readonly data: unknown = undefined,
  ) {
    super(message);
    this.name = 'CliFailure';
  }
}

export function usageError(message: string, next: string | null = null): CliFailure {
  return new CliFailure('usage', 'usage_error', message, null, next);
}

/** Ctrl-C (or Escape) in an interactive prompt: exit 130, no usage line. */
export function cancelled(): CliFailure {
  return new CliFailure('cancelled', 'cancelled', 'cancelled');
}
