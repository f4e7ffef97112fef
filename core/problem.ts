/** RFC 9457 problem+json body, the one error body of every svc surface, with `code` and `request_id` members. */
import { CODES, SvcError, type ErrorCode, type FieldError } from './errors.js';
import type { NextStep } from './next-step.js';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';
export const PROBLEM_TYPE_BASE = 'https://svc.dev/errors/';

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  request_id: string;
  errors?: FieldError[];
  /** Machine-readable next step; `detail` ends with the surface's wording of it. */
  next?: NextStep;
  [extra: string]: unknown;
}

/** `renderNext` is the surface's wording of a next step (e.g. restNextStep), appended to `detail`. */
export function problemOf(err: SvcError, requestId: string, renderNext?: (next: NextStep) => string): ProblemBody {
  const body: ProblemBody = {
    ...(err.extra ?? {}),
    type: PROBLEM_TYPE_BASE + err.code,
    title: CODES[err.code].title,
    status: err.status,
    detail: err.next && renderNext ? `${err.detail} ${renderNext(err.next)}` : err.detail,
    code: err.code,
    request_id: requestId,
  };
  if (err.errors) body.errors = err.errors;
  // Clients read `errors[]` of every validation_failed; a failure not tied to a field names the whole input ('').
  else if (err.code === 'validation_failed') body.errors = [{ path: '', message: err.detail }];
  if (err.next) body.next = err.next;
  return body;
}

/** Anything thrown that is not an SvcError becomes `internal`; its message never reaches the client. */
export function toSvcError(e: unknown): SvcError {
  if (e instanceof SvcError) return e;
  return new SvcError('internal', 'Internal error', { cause: e });
}
