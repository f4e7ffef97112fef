/**
 * Hono plumbing shared by every control-plane route file: the app's env type, a router factory whose zod
 * validation failures become `validation_failed`, and the one error mapper (`onError`).
 */
import { OpenAPIHono } from '@hono/zod-openapi';
import { HTTPException } from 'hono/http-exception';
import type { Context } from 'hono';
import type { AppContext } from '../context.js';
import type { Principal } from '../auth/principal.js';
import { SvcError, type FieldError } from '../../core/errors.js';
import { PROBLEM_CONTENT_TYPE, problemOf, toSvcError } from '../../core/problem.js';
import { restNextStep } from '../../core/next-step.js';

export interface AppEnv {
  Variables: {
    ctx: AppContext;
    requestId: string;
    /** Set by the authenticate middleware when a valid credential was sent. */
    principal: Principal | undefined;
  };
}

interface ZodLikeIssue {
  path: PropertyKey[];
  message: string;
}

export function fieldErrors(issues: readonly ZodLikeIssue[], prefix = ''): FieldError[] {
  return issues.map((i) => ({
    path: prefix + (i.path.length ? i.path.map(String).join('.') : ''),
    message: i.message,
  }));
}

/** A router for one domain's routes; mount it with `app.route('/', router)`. */
export function newRouter(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) {
        const errors = fieldErrors(result.error.issues);
        throw new SvcError('validation_failed', errors.map((e) => `${e.path || '(body)'}: ${e.message}`).join('; '), {
          errors,
        });
      }
    },
  });
}

export function problemResponse(c: Context<AppEnv>, err: SvcError): Response {
  const requestId = c.get('requestId') ?? 'req_unknown';
  const headers: Record<string, string> = { 'content-type': PROBLEM_CONTENT_TYPE, 'x-svc-request-id': requestId };
  if (err.retryAfter !== undefined) headers['retry-after'] = String(err.retryAfter);
  return new Response(JSON.stringify(problemOf(err, requestId, restNextStep)), { status: err.status, headers });
}

/** The control plane's single error edge. */
export function onError(e: unknown, c: Context<AppEnv>): Response {
  let err: SvcError;
  if (e instanceof HTTPException) {
    err = /JSON/i.test(e.message)
      ? new SvcError('invalid_json', 'Request body is not valid JSON')
      : e.status === 413
        ? new SvcError('payload_too_large')
        : e.status === 415
          ? new SvcError(
              'unsupported_media_type',
              `Send the body as JSON with Content-Type: application/json (got ${c.req.header('content-type') ?? 'none'})`,
            )
          : new SvcError('validation_failed', e.message);
  } else {
    err = toSvcError(e);
  }
  if (err.code === 'internal') {
    c.get('ctx')?.log.error('unhandled error', {
      request_id: c.get('requestId'),
      err: e instanceof Error ? e : String(e),
    });
  }
  return problemResponse(c, err);
}
