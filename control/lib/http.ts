/**
 * Hono plumbing shared by every control-plane route file: the app's env type, a router factory whose zod
 * validation failures become `validation_failed`, and the one error mapper (`onError`).
 */
import { OpenAPIHono, type RouteConfig } from '@hono/zod-openapi';
import { HTTPException } from 'hono/http-exception';
import type { Context, MiddlewareHandler } from 'hono';
import type { z } from 'zod';
import type { AppContext } from '../context.js';
import { assertAuthenticated, type Principal } from '../auth/principal.js';
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

/** zod issues as the one `validation_failed` error, one `errors[]` entry per bad field. */
export function validationError(issues: readonly ZodLikeIssue[]): SvcError {
  const errors = fieldErrors(issues);
  return new SvcError('validation_failed', errors.map((e) => `${e.path || '(body)'}: ${e.message}`).join('; '), {
    errors,
  });
}

/**
 * A router for one domain's routes; mount it with `app.route('/', router)`. A route whose OpenAPI entry declares
 * `security` refuses a request without a credential (401) before its input is validated, so the document's
 * security marks are the truth the auth suite checks.
 */
export function newRouter(): OpenAPIHono<AppEnv> {
  const router = new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) {
        throw validationError(result.error.issues);
      }
    },
  });
  const register = router.openapi.bind(router) as (route: RouteConfig, ...rest: unknown[]) => unknown;
  (router as { openapi: typeof register }).openapi = (route, ...rest) => {
    if (!route.security?.length) return register(route, ...rest);
    const own = route.middleware ? [route.middleware].flat() : [];
    return register({ ...route, middleware: [credentialRequired, ...own] }, ...rest);
  };
  return router;
}

const credentialRequired: MiddlewareHandler<AppEnv> = async (c, next) => {
  assertAuthenticated(c.get('principal'));
  await next();
};

/**
 * Sets a header on an answer a handler already produced, in place. Hono's c.header() on a finished answer rebuilds
 * it as a full Web Response (body stream included): a fifth of a static file's CPU. Only an answer whose headers
 * are immutable (a relayed fetch) takes that path.
 */
export function setAnswerHeader(c: Context, name: string, value: string): void {
  try {
    c.res.headers.set(name, value);
  } catch {
    c.header(name, value);
  }
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

/**
 * An optional JSON body (e.g. terms acceptance, publish): no body means `{}`; anything sent must be JSON matching
 * `schema`, else invalid_json / validation_failed. Never falls back to defaults on a malformed body.
 */
export async function optionalJsonBody<T extends z.ZodType>(c: Context<AppEnv>, schema: T): Promise<z.output<T>> {
  const text = await c.req.text();
  let json: unknown = {};
  if (text.trim() !== '') {
    try {
      json = JSON.parse(text);
    } catch {
      throw new SvcError('invalid_json', 'Request body is not valid JSON');
    }
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    throw validationError(parsed.error.issues);
  }
  return parsed.data;
}
