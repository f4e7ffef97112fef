/**
 * The CLI's one failure type. `usage` failures (unknown flag, missing argument) exit 2 and never reach the network;
 * every other failure exits 1. `next` is the command a person (or agent) should run to get unstuck.
 */
export type FailureKind = 'usage' | 'api';

export class CliFailure extends Error {
  constructor(
    readonly kind: FailureKind,
    readonly code: string,
    message: string,
    readonly status: number | null = null,
    readonly next: string | null = null,
  ) {
    super(message);
    this.name = 'CliFailure';
  }
}

export function usageError(message: string, next: string | null = null): CliFailure {
  return new CliFailure('usage', 'usage_error', message, null, next);
}
