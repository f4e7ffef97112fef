/**
 * The web pages' error edge: the same SvcError codes as the REST API, shown as a page with the status, the
 * server's next step as a link to the page where a person takes it (core/next-step.ts webNextStep), the code and
 * the request id (what a person quotes to the operator), never a stack trace.
 */
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { CODES } from '../../core/errors.js';
import { toSvcError } from '../../core/problem.js';
import { webNextStep } from '../../core/next-step.js';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { renderPage } from './layout.js';
import type { WebEnv } from './web-env.js';

export async function webOnError(e: unknown, c: Context<WebEnv>): Promise<Response> {
  // requireWebSession's redirect travels as an HTTPException carrying its response.
  if (e instanceof HTTPException && e.res) return e.getResponse();
  const err = toSvcError(e instanceof HTTPException ? new Error(e.message) : e);
  if (err.code === 'internal')
    c.get('ctx').log.error('unhandled page error', {
      request_id: c.get('requestId'),
      err: e instanceof Error ? e : String(e),
    });
  if (err.retryAfter !== undefined) c.header('retry-after', String(err.retryAfter));
  const step = err.next ? webNextStep(err.next) : null;
  return renderPage(
    c,
    { title: CODES[err.code].title, status: err.status as ContentfulStatusCode },
    <>
      <p class="notice error" role="alert">
        {err.detail}
      </p>
      {step ? <p class="next-step">{step.href === null ? step.label : <a href={step.href}>{step.label}</a>}</p> : null}
      <p class="hint">
        Error <code>{err.code}</code> · request <code>{c.get('requestId')}</code>
      </p>
      <p>
        <a href="/">Home</a>
      </p>
    </>,
  );
}
