/**
 * The web console ("Try it" on a listing page): a signed-in person quotes or calls one endpoint through the real
 * gateway, metered and charged like any other call, with the org's console key (console-key.ts). The browser never
 * sees a key: the page posts here with the session and CSRF token, and this service presents the key to the gateway
 * at `SVC_GATEWAY_URL` (config `urls.gateway`, as the MCP server does) over core/gateway-calls.ts. docs/web.md.
 */
import { randomBytes } from 'node:crypto';
import type { AppContext } from '../context.js';
import type { Row } from '../../core/db/database.js';
import { SvcError } from '../../core/errors.js';
import { createGatewayCalls, type GatewayAnswer, type GatewayCalls } from '../../core/gateway-calls.js';
import { QuoteSchema, type ListingSchemaView } from '../../core/schemas/catalog.schemas.js';
import type {
  ConsoleCallInput,
  ConsoleCallResult,
  ConsoleCapInput,
  ConsoleKeyView,
  ConsoleResult,
} from '../../core/schemas/console.schemas.js';
import { assertPerson, assertPublicRead, assertScope, type Principal } from '../auth/principal.js';
import { billingStatus } from '../billing/account.service.js';
import { getVisibleListing } from '../catalog/listings.repo.js';
import { listingSchema } from '../catalog/inspect.service.js';
import { patchKey } from '../keys/keys.service.js';
import { activeDocument, acceptanceOf, mayAcceptTerms } from '../terms/terms.service.js';
import { consoleForms, type ConsoleEndpointForm } from './console-form.js';
import { consoleKeyView, DEFAULT_CONSOLE_DAILY_CAP_CENTS, ensureConsoleKey } from './console-key.js';

/** Characters of an answer body the console shows (the gateway hop keeps 64 KB; a page shows less). */
export const CONSOLE_SHOWN_BODY_CHARS = 32 * 1024;

export interface ConsoleView {
  forms: ConsoleEndpointForm[];
  signedIn: boolean;
  /** The org's console key (no secret), or null before its first use. */
  key: ConsoleKeyView | null;
  defaultDailyCapCents: number;
  balanceCents: number | null;
  /** Required terms the org has not accepted yet: the console offers the accept step in place. */
  termsPending: { documentId: string; version: string; mayAccept: boolean } | null;
}

/** What the console shows for a listing: its forms, and for a signed-in person the key, balance and terms state. */
export async function consoleView(
  ctx: AppContext,
  caller: Principal | undefined,
  api: Row<'apis'>,
  schema: ListingSchemaView,
): Promise<ConsoleView> {
  const viewer = assertPublicRead(caller, 'catalog:read');
  const forms = consoleForms(schema);
  if (viewer?.kind !== 'session')
    return {
      forms,
      signedIn: false,
      key: null,
      defaultDailyCapCents: DEFAULT_CONSOLE_DAILY_CAP_CENTS,
      balanceCents: null,
      termsPending: null,
    };
  const [key, balance, doc] = await Promise.all([
    consoleKeyView(ctx.db, viewer.orgId, ctx.clock.now()),
    billingStatus(ctx, viewer),
    activeDocument(ctx.db, api.id),
  ]);
  const pending =
    doc && doc.acceptance_mode === 'required' && !(await acceptanceOf(ctx.db, viewer.orgId, doc.id)) ? doc : null;
  return {
    forms,
    signedIn: true,
    key,
    defaultDailyCapCents: DEFAULT_CONSOLE_DAILY_CAP_CENTS,
    // The balance a person knows (get_balance, the dashboard): credit leased to gateways for in-flight calls is
    // still theirs, so it is not taken off here.
    balanceCents: balance.credit_cents,
    termsPending: pending
      ? { documentId: pending.id, version: pending.version, mayAccept: mayAcceptTerms(viewer) }
      : null,
  };
}

const gateways = new Map<string, GatewayCalls>();
/** One keep-alive pool per gateway origin for the life of the process. */
function _gateway(url: string): GatewayCalls {
  const known = gateways.get(url);
  if (known) return known;
  const g = createGatewayCalls(url);
  gateways.set(url, g);
  return g;
}

interface BuiltRequest {
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body: unknown;
  rawBody: { contentType: string; text: string } | undefined;
}

/** The gateway request of a filled form; a missing required value or a body that is not JSON is `validation_failed`. */
function _request(form: ConsoleEndpointForm, input: ConsoleCallInput): BuiltRequest {
  const errors: { path: string; message: string }[] = [];
  const values = { path: input.path, query: input.query, header: input.headers };
  const query: Record<string, string> = {};
  const headers: Record<string, string> = {};
  let path = form.path;
  for (const f of form.fields) {
    const v = (values[f.in][f.name] ?? '').trim();
    const formPath = `${f.in === 'header' ? 'headers' : f.in}.${f.name}`;
    if (v === '') {
      if (f.required) errors.push({ path: formPath, message: `${f.name} is required` });
      continue;
    }
    if (f.in === 'path') path = path.replaceAll(`{${f.name}}`, encodeURIComponent(v));
    else if (f.in === 'query') query[f.name] = v;
    else headers[f.name.toLowerCase()] = v;
  }
  let body: unknown;
  let rawBody: BuiltRequest['rawBody'];
  const text = (input.body ?? '').trim();
  if (form.body && text !== '') {
    if (form.body.isJson) {
      try {
        body = JSON.parse(text);
      } catch (e) {
        errors.push({ path: 'body', message: `not valid JSON (${(e as Error).message})` });
      }
    } else rawBody = { contentType: form.body.contentType, text };
  } else if (form.body?.required) errors.push({ path: 'body', message: 'the request body is required' });
  if (errors.length)
    throw new SvcError('validation_failed', errors.map((e) => `${e.path}: ${e.message}`).join('; '), { errors });
  return { path, query, headers, body, rawBody };
}

function _json(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Pretty JSON when the body parses as JSON; capped for the page either way. */
function _shownBody(a: GatewayAnswer): Pick<ConsoleCallResult, 'body' | 'body_truncated'> {
  let body = a.body;
  if (a.body_encoding === 'utf8' && !a.body_truncated && /json/i.test(a.headers['content-type'] ?? '')) {
    try {
      body = JSON.stringify(JSON.parse(a.body), null, 2);
    } catch {
      /* not JSON after all: shown as sent */
    }
  }
  const cut = body.length > CONSOLE_SHOWN_BODY_CHARS;
  return { body: cut ? body.slice(0, CONSOLE_SHOWN_BODY_CHARS) : body, body_truncated: cut || a.body_truncated };
}

/**
 * A free quote or a call of one endpoint of a visible listing, as the signed-in person's org, through the gateway
 * with the org's console key (created on first use with `daily_cap_cents`). The call is metered, capped and charged
 * by the gateway exactly like any other; a send carries the quoted price as its max price and the form's attempt id
 * as its Idempotency-Key, so a resubmitted form is charged once.
 */
export async function runConsole(
  ctx: AppContext,
  caller: Principal | undefined,
  input: ConsoleCallInput,
): Promise<ConsoleResult> {
  const person = assertPerson(caller);
  assertScope(person, 'proxy:call');
  const api = await getVisibleListing(ctx.db, input.slug, person.orgId);
  const form = consoleForms(await listingSchema(ctx.db, api)).find((f) => f.endpointId === input.endpoint_id);
  if (!form) throw new SvcError('not_found', `No endpoint ${input.endpoint_id} on ${api.slug}`);
  const req = _request(form, input);
  const now = ctx.clock.now();
  const key = await ensureConsoleKey(ctx.db, ctx.secretKey, person, input.daily_cap_cents, now);
  const answer = await _gateway(ctx.urls.gateway)
    .call({
      key: key.plaintext,
      slug: api.slug,
      method: form.method,
      path: req.path,
      query: req.query,
      headers: req.headers,
      body: req.body,
      ...(req.rawBody ? { rawBody: req.rawBody } : {}),
      idempotencyKey: `console_${input.attempt ?? randomBytes(12).toString('base64url')}`,
      maxPriceCents: input.action === 'send' ? input.max_price_cents : undefined,
      quote: input.action === 'quote',
    })
    .catch((e: unknown) => {
      // A form the hop refused (a header value it cannot send) is the form's error, not the gateway's.
      if (e instanceof SvcError) throw e;
      ctx.log.warn('console: gateway unreachable', { err: e instanceof Error ? e : String(e) });
      throw new SvcError(
        'unavailable',
        'The gateway did not answer. Try again: sending this same form again is never charged twice.',
        { cause: e },
      );
    });
  const refusal =
    answer.problem && typeof answer.problem.code === 'string'
      ? { code: answer.problem.code, detail: String(answer.problem.detail ?? '') }
      : null;
  if (input.action === 'quote') {
    const balance = (await billingStatus(ctx, person)).credit_cents;
    const q = answer.status === 200 ? QuoteSchema.safeParse(_json(answer.body)) : undefined;
    if (q?.success)
      return {
        kind: 'quote',
        price_cents: q.data.price_cents,
        would_pass: q.data.would_pass,
        code: q.data.code,
        detail: q.data.detail,
        balance_cents: balance,
      };
    return {
      kind: 'quote',
      price_cents: answer.price_cents ?? form.priceCents,
      would_pass: false,
      code: refusal?.code ?? 'upstream_error',
      detail: refusal?.detail ?? `The gateway answered ${answer.status}`,
      balance_cents: balance,
    };
  }
  return {
    kind: 'call',
    status: answer.status,
    headers: answer.headers,
    ..._shownBody(answer),
    body_encoding: answer.body_encoding,
    body_bytes: answer.body_bytes,
    refusal,
    request_id: answer.request_id,
    price_cents: answer.price_cents,
    charged_cents: answer.charged_cents,
    balance_cents: answer.balance_cents ?? (await billingStatus(ctx, person)).credit_cents,
    idempotent_replay: answer.idempotent_replay,
  };
}

/** Sets the console key's daily cap (null: none), creating the key with that cap if it does not exist yet. */
export async function setConsoleDailyCap(
  ctx: AppContext,
  caller: Principal | undefined,
  input: ConsoleCapInput,
): Promise<ConsoleKeyView> {
  const person = assertPerson(caller);
  assertScope(person, 'keys:write');
  const now = ctx.clock.now();
  const key = await ensureConsoleKey(ctx.db, ctx.secretKey, person, input.daily_cap_cents, now);
  await patchKey(ctx.db, person, key.keyId, { daily_cap_cents: input.daily_cap_cents }, now);
  const view = await consoleKeyView(ctx.db, person.orgId, now);
  if (!view) throw new SvcError('conflict', 'The console key was revoked meanwhile; try again');
  return view;
}
