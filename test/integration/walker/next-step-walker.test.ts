/**
 * The next-step walker (issue 24 item 1). For every error code of core/errors.ts, every surface that can produce
 * it (REST control plane, gateway, MCP tools, CLI, web pages) and every kind of principal that can get it, the
 * walker provokes the refusal against the real processes, takes the `next` step it was given and follows it as that
 * principal (or as the person the step names), and fails when the step
 *   - names something that does not exist on that surface: a REST route missing from the control plane's OpenAPI
 *     document, a tool missing from tools/list, a command that does not parse in the svc CLI's command tree, a page
 *     that is not an HTML page (or the sign-in redirect) of the running control plane;
 *   - loops back to the same call (the same tool, or the same refused command), except `retry_later`, which must
 *     carry a Retry-After;
 *   - is refused, when taken, for the same reason (the same code).
 * The matrix is the error catalog: `WALK` has one entry per code, checked both by its type and at run time, so a
 * new code without a walker entry fails. A code no surface can produce for a principal the walker can be, and a code
 * whose only remedy is the caller's own input, is listed with the reason. docs/errors.md "The next-step walker"
 * states the rules.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseStrict } from '../../../cli/args.js';
import type { AnyCommand } from '../../../cli/command.js';
import { root } from '../../../cli/commands/index.js';
import { CODES, type ErrorCode } from '../../../core/errors.js';
import { type NextAction, type NextStep, NextStepSchema, restNextStep, webNextStep } from '../../../core/next-step.js';
import { renderNextStep } from '../../../mcp/next-step.js';
import { cliNextStep } from '../../../cli/next-step.js';
import { createLiveListing } from '../../helpers/catalog.js';
import { runSvc, tempHome } from '../../helpers/cli.js';
import { grantCredits, seedKey, seedOrg, type SeededOrg } from '../../helpers/db.js';
import { call } from '../../helpers/http.js';
import { rawPost, startMcpFixture, type McpFixture } from '../mcp/fixture.js';

type Surface = 'rest' | 'gateway' | 'mcp' | 'cli' | 'web';
type PrincipalKind = 'keyless' | 'bare_key' | 'verified_key' | 'capped_key' | 'session' | 'revoked_key';

/** One credential the walker acts as, and the person (an owner session) of its org where it has one. */
interface Principal {
  kind: PrincipalKind;
  key?: string;
  keyId?: string;
  session?: string;
  /** The org's owner session: who a step addressed to "a person of the org" is followed as. */
  person?: string;
  email: string;
}

/** What a refusal handed the caller, per surface: the server's step, the MCP step, the CLI command, the page link. */
type Given =
  | { surface: 'rest' | 'gateway'; next: NextStep | undefined; retryAfter: string | null }
  | { surface: 'mcp'; next: { tool?: string; url?: string; hint?: string } | undefined }
  | { surface: 'cli'; next: string | null; message: string }
  | { surface: 'web'; next: string | null };

interface Refusal {
  /** The refusal's code; null when the call succeeded (a retry after the step was taken). */
  code: string | null;
  given: Given;
}

/** When a provoke stops retrying: the first answer it accepts (changes reach the gateway through a feed). */
type Until = (code: string | null) => boolean;
const refused: Until = (code) => code !== null;

/** One walk: a surface, a principal kind, the call that is refused, and how to take the call again. */
interface Walk {
  surface: Surface;
  principal: PrincipalKind;
  call: string;
  /** Makes the refusal happen as `p` (retrying until `until` accepts the answer). */
  provoke(p: Principal, until?: Until): Promise<Refusal>;
  /**
   * Why this refusal carries no step on this surface (its page still links on). Without it a walk whose refusal
   * has no `next` fails: a refusal the caller can act on says how.
   */
  noStep?: string;
  /** The key gets a rate limit of one call a minute (the second call is refused). */
  rateLimited?: true;
  /** For capped keys, which cap (the step raises it). */
  cap?: 'budget_cents' | 'per_call_max_cents' | 'daily_cap_cents' | 'approval_mode';
}

type Entry = { walks: Walk[] } | { unreachable: string } | { ownInput: string };

let f: McpFixture;
let termsSlug: string;
let spec: { paths: Record<string, Record<string, unknown>> };
let toolNames: Set<string>;
const homes: (() => void)[] = [];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------------------------
// Principals
// ---------------------------------------------------------------------------------------------------------------

let emailSeq = 0;
const freshEmail = () => `walker-${Date.now().toString(36)}-${++emailSeq}@example.com`;

async function registered(): Promise<{ api_key: string; key_id: string; org_id: string }> {
  const r = await call(f.h.control.url, 'POST', '/v1/register');
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
}

async function makePrincipal(
  kind: PrincipalKind,
  opts: { credits?: number; cap?: Parameters<typeof seedKey>[2]; rateLimit?: number } = {},
): Promise<Principal> {
  switch (kind) {
    case 'keyless':
      return { kind, email: freshEmail() };
    case 'bare_key': {
      const r = await registered();
      return { kind, key: r.api_key, keyId: r.key_id, email: freshEmail() };
    }
    case 'revoked_key': {
      const r = await registered();
      const del = await call(f.h.control.url, 'DELETE', `/v1/keys/${r.key_id}`, { token: r.api_key });
      expect(del.status).toBe(200);
      return { kind, key: r.api_key, keyId: r.key_id, email: freshEmail() };
    }
    case 'verified_key':
    case 'session':
    case 'capped_key': {
      const org: SeededOrg = await seedOrg(f.db);
      if (opts.credits) await grantCredits(f.db, org.orgId, opts.credits);
      if (kind === 'session') return { kind, session: org.session, person: org.session, email: org.email };
      const { key, keyId } = kind === 'capped_key' ? await seedKey(f.db, org.orgId, opts.cap ?? {}) : org;
      // Before the key's first call, so the gateway reads it with its limit.
      if (opts.rateLimit)
        await f.db.db
          .updateTable('api_keys')
          .set({ rate_limit_per_min: opts.rateLimit })
          .where('id', '=', keyId)
          .execute();
      return { kind, key, keyId, person: org.session, email: org.email };
    }
  }
}

const credentialOf = (p: Principal): string | undefined => p.key ?? p.session;

// ---------------------------------------------------------------------------------------------------------------
// Surfaces: provoke
// ---------------------------------------------------------------------------------------------------------------

async function rest(p: Principal, method: string, path: string, body?: unknown): Promise<Refusal> {
  const token = credentialOf(p);
  const r = await call(f.h.control.url, method, path, { ...(token ? { token } : {}), body });
  return {
    code: r.status >= 400 ? r.body.code : null,
    given: { surface: 'rest', next: r.body.next, retryAfter: r.headers.get('retry-after') },
  };
}

async function gatewayCall(
  p: Principal,
  path: string,
  headers: Record<string, string> = {},
  until: Until = refused,
): Promise<Refusal> {
  const token = credentialOf(p);
  // A change (a new key, a revocation, terms, a cap) reaches the gateway through its change feed: wait for it.
  let out: Refusal | undefined;
  for (let i = 0; i < 50; i++) {
    const res = await fetch(`${f.gateway.url}${path}`, {
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    });
    const body = (await res.json()) as { code?: string; next?: NextStep };
    const code = res.status >= 400 ? (body.code ?? `http_${res.status}`) : null;
    out = { code, given: { surface: 'gateway', next: body.next, retryAfter: res.headers.get('retry-after') } };
    if (until(code)) break;
    await sleep(100);
  }
  return out!;
}

/** A tools/call with the real MCP SDK client, as `p` (a bearer); a refusal at the HTTP layer is read raw. */
async function mcpTool(p: Principal, tool: string, args: Record<string, unknown>): Promise<McpOutcome> {
  const token = credentialOf(p);
  const auth: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const probe = await rawPost(
    f.endpoint,
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: args } },
    auth,
  );
  if (probe.status !== 200) {
    // Refused before the tool runs (HTTP 401/403 with a WWW-Authenticate challenge an MCP client follows): the
    // challenge's metadata must be there, and the problem's step is rendered as the tools render theirs.
    const metadata = /resource_metadata="([^"]+)"/.exec(probe.headers.get('www-authenticate') ?? '')?.[1];
    if (metadata) expect((await fetch(metadata)).status, metadata).toBe(200);
    const step = probe.json?.next ? NextStepSchema.parse(probe.json.next) : undefined;
    return {
      refused: true,
      code: probe.json?.code ?? `http_${probe.status}`,
      next: step ? renderNextStep(step, { control: f.h.control.url }, tool) : undefined,
    };
  }
  const transport = new StreamableHTTPClientTransport(new URL(f.endpoint), {
    ...(token ? { requestInit: { headers: auth } } : {}),
  });
  const client = new Client({ name: 'next-step-walker', version: '1.0.0' });
  await client.connect(transport);
  try {
    const r = (await client.callTool({ name: tool, arguments: args })) as {
      isError?: boolean;
      structuredContent?: { error?: { code: string; next?: McpStep } } & Record<string, unknown>;
    };
    const error = r.structuredContent?.error;
    if (r.isError && error) return { refused: true, code: error.code, next: error.next };
    return { refused: r.isError === true, code: null, next: undefined, data: r.structuredContent };
  } finally {
    await client.close();
  }
}
type McpStep = { tool?: string; url?: string; hint?: string };
type McpOutcome = { refused: boolean; code: string | null; next: McpStep | undefined; data?: Record<string, unknown> };

async function mcp(
  p: Principal,
  tool: string,
  args: Record<string, unknown>,
  until: Until = refused,
): Promise<Refusal> {
  let out: McpOutcome | undefined;
  for (let i = 0; i < 50; i++) {
    out = await mcpTool(p, tool, args);
    if (until(out.refused ? (out.code ?? 'refused') : null)) break;
    await sleep(100);
  }
  return { code: out!.refused ? (out!.code ?? 'refused') : null, given: { surface: 'mcp', next: out!.next } };
}

/** A HOME whose config holds the principal's credentials (and, with `asPerson`, its org's owner session too). */
function homeFor(p: Principal, asPerson = false): string {
  const h = tempHome();
  homes.push(h.cleanup);
  const session = asPerson ? p.person : p.session;
  mkdirSync(join(h.home, '.svc'), { recursive: true, mode: 0o700 });
  writeFileSync(
    join(h.home, '.svc', 'config.json'),
    JSON.stringify({ ...(p.key ? { apiKey: p.key } : {}), ...(session ? { sessionToken: session } : {}) }),
    { mode: 0o600 },
  );
  return h.home;
}

const stack = () => ({
  control: f.h.control.url,
  gateway: f.gateway.url,
  mcp: f.mcp.url,
  env: {},
  stop: async () => {},
});

async function svc(p: Principal, args: string[], asPerson = false) {
  return runSvc([...args, '--json'], { home: homeFor(p, asPerson), stack: stack() });
}

async function cli(p: Principal, args: string[], until: Until = refused): Promise<Refusal> {
  let out: Refusal | undefined;
  for (let i = 0; i < 30; i++) {
    const r = await svc(p, args);
    expect([0, 1], r.stdout + r.stderr).toContain(r.code);
    const error = r.code === 0 ? null : (r.json().error as { code: string; next: string | null; message: string });
    out = {
      code: error?.code ?? null,
      given: { surface: 'cli', next: error?.next ?? null, message: error?.message ?? '' },
    };
    if (until(out.code)) break;
    await sleep(150);
  }
  return out!;
}

/** What a browser sends and gets: Accept text/html, the session cookie, redirects not followed. */
async function browse(method: 'GET' | 'POST', path: string, session?: string, form?: Record<string, string>) {
  const res = await fetch(f.h.control.url + path, {
    method,
    redirect: 'manual',
    headers: {
      accept: 'text/html,application/xhtml+xml',
      ...(session ? { cookie: `svc_session=${session}` } : {}),
      ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
    },
    ...(form ? { body: new URLSearchParams(form).toString() } : {}),
  });
  return { status: res.status, headers: res.headers, html: await res.text(), location: res.headers.get('location') };
}

/** A page as a person's browser gets it (a form posted without its security token with `stale`). */
async function web(p: Principal, method: 'GET' | 'POST', path: string, form?: Record<string, string>) {
  const page = await browse(method, path, p.session, form);
  expect(page.status, page.html.slice(0, 300)).toBeGreaterThanOrEqual(400);
  expect(page.headers.get('content-type')).toMatch(/^text\/html/);
  webPages.set(path, page.html);
  const code = /Error <code>([a-z_]+)<\/code>/.exec(page.html)?.[1] ?? `http_${page.status}`;
  const href = /<p class="next-step"><a href="([^"]+)"/.exec(page.html)?.[1] ?? null;
  return { code, given: { surface: 'web' as const, next: href } };
}
const webPages = new Map<string, string>();

// ---------------------------------------------------------------------------------------------------------------
// Following a step
// ---------------------------------------------------------------------------------------------------------------

/** The routes a REST step's wording names, as `METHOD /v1/...` with `{…}` templates. */
function routesNamed(text: string): { method: string; path: string }[] {
  return [...text.matchAll(/\b(GET|POST|PUT|PATCH|DELETE) (\/v1\/[^\s,;)]*[^\s,;).])/g)].map((m) => ({
    method: m[1]!,
    path: m[2]!,
  }));
}

/** The route (a template like /v1/apis/{slug}/schema) is in the control plane's OpenAPI document. */
function routeExists(method: string, path: string): boolean {
  const want = path.split('/');
  return Object.entries(spec.paths).some(([template, ops]) => {
    const have = template.split('/');
    return (
      have.length === want.length &&
      have.every((seg, i) => seg === want[i] || (seg.startsWith('{') && seg.endsWith('}'))) &&
      method.toLowerCase() in ops
    );
  });
}

/** A page a person opens: HTML 200 in the layout, or a 303 to the sign-in page. */
async function expectPage(url: string, session?: string, hops = 0): Promise<void> {
  expect(url.startsWith(f.h.control.url) || url.startsWith('/'), `${url} is not on the control plane`).toBe(true);
  const path = url.startsWith('/') ? url : url.slice(f.h.control.url.length);
  expect(path, `${url} is a REST route, not a page`).not.toMatch(/^\/v1\//);
  const page = await browse('GET', path.replace(/#.*$/, ''), session);
  if (page.status === 303) {
    // The sign-in a page needs, or (for /login, signed in already) the page it sends a person to.
    expect(page.location, `${url} redirects off the site`).toMatch(/^\/(?!\/)/);
    if (!/^\/login(\?|$)/.test(page.location!)) {
      expect(hops, `${url}: a redirect loop`).toBeLessThan(3);
      await expectPage(page.location!, session, hops + 1);
    }
    return;
  }
  expect(page.status, `${url}: ${page.html.slice(0, 200)}`).toBe(200);
  expect(page.headers.get('content-type')).toMatch(/^text\/html/);
}

const CAP_RAISE: Record<'budget' | 'per_call' | 'daily' | 'approval_mode', Record<string, unknown>> = {
  budget: { budget_cents: 1000 },
  per_call: { per_call_max_cents: 1000 },
  daily: { daily_cap_cents: 1000 },
  approval_mode: { approval_mode: 'auto' },
};

/**
 * How a REST step is taken, per action (exhaustive: a new action is a type error here). Each returns the code of
 * the refusal it met (null when the step worked); `retry` takes the refused call again after the step.
 */
type RestFollower<S extends NextStep> = (
  step: S,
  p: Principal,
  retry: (as: Principal) => Promise<Refusal>,
  given: Extract<Given, { surface: 'rest' | 'gateway' }>,
) => Promise<void>;
const REST_FOLLOW: { [A in NextAction]: RestFollower<Extract<NextStep, { action: A }>> } = {
  async authenticate(step, p, retry) {
    // A keyless caller gets a key without an account; with it, the call is no longer refused for the credential.
    const r = await registered();
    const again = await retry({ kind: 'bare_key', key: r.api_key, keyId: r.key_id, email: p.email });
    expect(['unauthorized', 'api_key_required']).not.toContain(again.code);
    // Every credential kind the wording offers must be one this surface takes.
    if (restNextStep(step).includes('sess_')) {
      const org = await seedOrg(f.db);
      const withSession = await retry({ kind: 'session', session: org.session, email: org.email });
      expect(['unauthorized', 'api_key_required'], 'the step offers sess_ tokens here').not.toContain(withSession.code);
    }
  },
  async log_in(_s, p) {
    // Signing in reaches the principal's org only if it has a person (a verified email); else it makes another org.
    expect(p.person ?? p.session, 'log_in given to a key whose org has nobody to sign in as').toBeDefined();
    const r = await call(f.h.control.url, 'POST', '/v1/auth/login/request', { body: { email: p.email } });
    expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
  },
  async verify_email(_s, p) {
    const r = await call(f.h.control.url, 'POST', '/v1/auth/email', {
      token: credentialOf(p),
      body: { email: freshEmail() },
    });
    expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
  },
  async ask_org_admin(_s, p) {
    expect(p.person, 'ask_org_admin given to a principal whose org has no person').toBeDefined();
  },
  async get_key(_s, p, retry, given) {
    // Signed in, a person makes a key of their org; without a session, a new registration.
    let key: Principal;
    if (p.session) {
      const r = await call(f.h.control.url, 'POST', '/v1/keys', { token: p.session, body: { name: 'walker' } });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      key = { kind: 'verified_key', key: r.body.api_key, keyId: r.body.key.id, email: p.email };
    } else {
      const r = await registered();
      key = { kind: 'bare_key', key: r.api_key, keyId: r.key_id, email: p.email };
    }
    const again = await retry(key);
    expect(again.code).not.toBe(originalCode.get(given));
  },
  async buy_credits(_s, p) {
    const r = await call(f.h.control.url, 'POST', '/v1/billing/checkout', {
      token: credentialOf(p),
      body: { pack: 'starter' },
    });
    expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
  },
  async add_card(_s, p) {
    const r = await call(f.h.control.url, 'POST', '/v1/billing/setup', { token: credentialOf(p), body: {} });
    expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
  },
  async raise_cap(step, p, retry, given) {
    // The capped key cannot (cap_escalation): a person of the org raises it, and the call then passes the cap.
    expect(p.person, 'raise_cap given to a key whose org has no person').toBeDefined();
    const r = await call(f.h.control.url, 'PATCH', `/v1/keys/${p.keyId}`, {
      token: p.person,
      body: CAP_RAISE[step.cap],
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const again = await retry(p);
    expect(again.code, `still refused after raising ${step.cap} (${given.surface})`).not.toBe(originalCode.get(given));
  },
  async accept_terms(step, p, retry, given) {
    expect(p.person, 'accept_terms given to a key whose org has no person').toBeDefined();
    const r = await call(f.h.control.url, 'POST', `/v1/apis/${step.slug}/terms/accept`, { token: p.person, body: {} });
    expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
    const again = await retry(p);
    expect(again.code).not.toBe(originalCode.get(given));
  },
  async check_price(step, p) {
    const r = await call(f.h.control.url, 'GET', `/v1/apis/${step.slug}/schema`, { token: credentialOf(p) });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  },
  async find_listing(_s, p) {
    const r = await call(f.h.control.url, 'GET', '/v1/catalog/search?q=test', { token: credentialOf(p) });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  },
  async list_endpoints(step, p) {
    const r = await call(f.h.control.url, 'GET', `/v1/apis/${step.slug}/schema`, { token: credentialOf(p) });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  },
  async retry_later(_s, _p, _r, given) {
    expect(Number(given.retryAfter), 'retry_later without a Retry-After').toBeGreaterThan(0);
  },
};
const originalCode = new WeakMap<Given, string | null>();

/** The arguments a tool a step names is called with, when the walker follows it. */
function toolArgs(tool: string, ctx: { slug: string; email: string }): Record<string, unknown> {
  const table: Record<string, Record<string, unknown>> = {
    verify_email: { email: freshEmail() },
    create_checkout: { pack: 'starter' },
    billing_setup: {},
    search_apis: { query: 'test' },
    get_schema: { slug: ctx.slug },
    svc_register: {},
    update_my_profile: { display_name: 'Walker' },
    list_providers: {},
    provider_list_apis: {},
    provider_get_api: { api_id: f.listing.apiId },
  };
  const args = table[tool];
  expect(args, `the walker has no arguments for the tool ${tool}: add them`).toBeDefined();
  return args!;
}

/** Placeholder values for `<…>` in a CLI step, by the words inside. */
const PLACEHOLDER: Record<string, (p: Principal) => string> = {
  '<your email>': () => freshEmail(),
  '<email>': () => freshEmail(),
  '<cents>': () => '1000',
  '<query>': () => 'test',
};

/** The command parses in the svc command tree (subcommands, then strict flags), as `svc` itself would parse it. */
async function expectParses(words: string[]): Promise<void> {
  expect(words[0]).toBe('svc');
  let cur: AnyCommand = root;
  const rest = words.slice(1);
  while (cur.subCommands && rest[0] !== undefined && !rest[0].startsWith('-')) {
    const load = cur.subCommands[rest[0]];
    expect(load, `unknown command '${words.join(' ')}'`).toBeDefined();
    cur = await load!();
    rest.shift();
  }
  expect(cur.run, `'${words.join(' ')}' is not a runnable command`).toBeDefined();
  expect(() => parseStrict(rest, cur.args ?? {}, cur.multiple ?? [])).not.toThrow();
}

async function follow(walk: Walk, p: Principal, refusal: Refusal): Promise<void> {
  const { given } = refusal;
  originalCode.set(given, refusal.code);
  if (walk.noStep === undefined)
    expect(given.next ?? null, `no next step (a walk without one says why: noStep)`).not.toBeNull();
  // Taking the call again after the step: until its answer is no longer this refusal (or the wait runs out).
  const retry = (as: Principal) => walk.provoke(as, (code) => code !== refusal.code);
  switch (given.surface) {
    case 'rest':
    case 'gateway': {
      if (!given.next) return;
      const step = NextStepSchema.parse(given.next);
      for (const r of routesNamed(restNextStep(step))) {
        expect(routeExists(r.method, r.path), `the step names ${r.method} ${r.path}, which does not exist`).toBe(true);
        expect(`${r.method} ${r.path}`, 'the step loops back to the refused call').not.toBe(walk.call);
      }
      // The table is indexed by the step's own action, so its follower takes this very step.
      const take = REST_FOLLOW[step.action] as RestFollower<NextStep>;
      await take(step, p, retry, given);
      return;
    }
    case 'mcp': {
      const next = given.next;
      expect(next, 'an MCP refusal without a next step').toBeDefined();
      expect(Boolean(next!.tool) !== Boolean(next!.url), 'a step is one tool or one page').toBe(true);
      if (next!.url) {
        await expectPage(next!.url, p.person);
        return;
      }
      const tool = next!.tool!;
      expect(toolNames.has(tool), `${tool} is not in tools/list`).toBe(true);
      const calledTool = walk.call.split(' ')[0]!;
      if (tool === calledTool) {
        // Only "wait, then retry" may send the agent back to the very tool, and then it must say how long.
        expect(next!.hint ?? '', `${tool} loops back to itself`).toMatch(/wait|retry/);
        return;
      }
      // svc_register is how a caller without a working credential gets one: it is taken without the dead one.
      const as: Principal = tool === 'svc_register' ? { kind: 'keyless', email: p.email } : p;
      const out = await mcpTool(as, tool, toolArgs(tool, { slug: f.listing.slug, email: p.email }));
      expect(out.code, `${tool} refused for the same reason`).not.toBe(refusal.code);
      expect(out.refused, `${tool} refused: ${out.code}`).toBe(false);
      return;
    }
    case 'cli': {
      const next = given.next;
      if (!next) return;
      expect(next, 'a CLI step is one command line').toMatch(/^svc [^`\n]+$/);
      let line = next;
      for (const [ph, v] of Object.entries(PLACEHOLDER)) line = line.replaceAll(ph, v(p));
      expect(line, `unfilled placeholder in '${next}'`).not.toMatch(/<[^>]+>/);
      const words = line.split(' ');
      await expectParses(words);
      if (line === `svc ${walk.call}`) {
        // Only "wait, then retry" may send a person back to the very command, and then it says how long.
        expect(refusal.code, 'the step loops back to the refused command').toBe('rate_limited');
        expect(given.message, 'a retry without a wait').toMatch(/\d+ ?s\b/);
        return;
      }
      // `svc login` asks for an email on a terminal; given one, it sends the code (the rest is the person's).
      const args = words.slice(1);
      if (args.length === 1 && args[0] === 'login') args.push('--email', freshEmail());
      // A person of the org follows steps addressed to a person (caps, terms); else the principal itself.
      const asPerson = /^svc (budget set|terms accept)/.test(line) && p.person !== undefined;
      let r = await svc(p, args, asPerson);
      // Without a terminal a command that asks for confirmation says so, its own step the same line with --yes:
      // a person at a terminal answers the question instead.
      if (r.code === 2 && r.json().error?.next === `${line} --yes`) r = await svc(p, [...args, '--yes'], asPerson);
      const code = r.code === 0 ? null : (r.json().error?.code as string);
      expect(code, `'${line}' refused for the same reason: ${r.stdout}`).not.toBe(refusal.code);
      expect(r.code, `'${line}' failed: ${r.stdout}${r.stderr}`).toBe(0);
      if (asPerson) {
        const again = await retry(p);
        expect(again.code, `'svc ${walk.call}' still refused after '${line}'`).not.toBe(refusal.code);
      }
      return;
    }
    case 'web': {
      if (given.next) return expectPage(given.next, p.session);
      // No step of the server's: the page still leads on, to home (a real page) at least.
      const html = webPages.get(walk.call.split(' ')[1]!) ?? '';
      const links = [...html.matchAll(/<a href="(\/[^"]*)"/g)].map((m) => m[1]!);
      expect(links, 'an error page that leads nowhere').toContain('/');
      return;
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The matrix: one entry per error code (a new code is a type error here, and a failure below)
// ---------------------------------------------------------------------------------------------------------------

/** The fixture's listing (test/integration/mcp/fixture.ts: GET /ping free, GET /items/{id} 3 cents). */
const SLUG = 'mcp-test-api';
/** A listing of the same upstream whose required terms nobody accepted yet. */
const TERMS_SLUG = 'walker-terms-api';
const paid = () => `/${SLUG}/items/1`;
const callPaid = () => `call ${SLUG} /items/1`;

const WALK: { [C in ErrorCode]: Entry } = {
  validation_failed: { ownInput: 'the detail and `errors` name the field to fix; the step is the same call, fixed' },
  invalid_json: { ownInput: 'the body is not JSON: the caller fixes its own request' },
  challenge_required: {
    unreachable: 'only with SVC_CHALLENGE configured (production bot check); a person solves it on the page',
  },
  challenge_failed: { unreachable: 'only with SVC_CHALLENGE configured (production bot check)' },
  invalid_code: { ownInput: 'the login code typed was wrong: the person types the code from the mail again' },
  invalid_token: {
    ownInput: 'the verification token pasted was wrong, used or expired: the person asks for a new mail',
  },
  accept_terms_required: { ownInput: 'publishing needs accept_terms: true; the step is the same call with it' },
  url_not_allowed: { ownInput: 'the URL given is refused (SSRF rules); the caller gives another' },
  path_not_allowed: { ownInput: 'a path parameter would leave the endpoint path; the caller fixes the value' },
  webhook_signature_invalid: { unreachable: "the payment processor's webhook: no principal of the walker calls it" },
  invalid_grant: { ownInput: 'the CLI login code is wrong, used or expired: `svc login` starts a new one' },
  authorization_pending: { ownInput: 'the CLI login poll: the CLI keeps polling, no person acts' },
  expired_token: { ownInput: 'the CLI login expired: `svc login` starts a new one' },
  unauthorized: {
    walks: [
      { surface: 'rest', principal: 'keyless', call: 'GET /v1/me', provoke: (p) => rest(p, 'GET', '/v1/me') },
      { surface: 'gateway', principal: 'keyless', call: 'GET paid', provoke: (p, u) => gatewayCall(p, paid(), {}, u) },
      { surface: 'mcp', principal: 'keyless', call: 'get_balance', provoke: (p, u) => mcp(p, 'get_balance', {}, u) },
      { surface: 'cli', principal: 'keyless', call: 'balance', provoke: (p, u) => cli(p, ['balance'], u) },
      // /mcp answers a revoked key and a sess_ token 401 invalid_token (RFC 6750), the reason in `reason`.
      {
        surface: 'mcp',
        principal: 'revoked_key',
        call: 'get_balance',
        provoke: (p, u) => mcp(p, 'get_balance', {}, u),
      },
      { surface: 'mcp', principal: 'session', call: 'get_balance', provoke: (p, u) => mcp(p, 'get_balance', {}, u) },
    ],
  },
  api_key_required: {
    walks: [
      { surface: 'gateway', principal: 'session', call: 'GET paid', provoke: (p, u) => gatewayCall(p, paid(), {}, u) },
    ],
  },
  session_required: {
    walks: [
      {
        surface: 'rest',
        principal: 'verified_key',
        call: 'POST terms accept',
        provoke: (p) => rest(p, 'POST', `/v1/apis/${termsSlug}/terms/accept`, {}),
      },
      {
        surface: 'rest',
        principal: 'bare_key',
        call: 'POST terms accept',
        provoke: (p) => rest(p, 'POST', `/v1/apis/${termsSlug}/terms/accept`, {}),
      },
      {
        surface: 'cli',
        principal: 'bare_key',
        call: `terms accept ${TERMS_SLUG} --yes`,
        provoke: (p, u) => cli(p, ['terms', 'accept', TERMS_SLUG, '--yes'], u),
      },
      {
        surface: 'cli',
        principal: 'verified_key',
        call: `terms accept ${TERMS_SLUG} --yes`,
        provoke: (p, u) => cli(p, ['terms', 'accept', TERMS_SLUG, '--yes'], u),
      },
    ],
  },
  insufficient_credits: {
    walks: [
      { surface: 'gateway', principal: 'bare_key', call: 'GET paid', provoke: (p, u) => gatewayCall(p, paid(), {}, u) },
      {
        surface: 'gateway',
        principal: 'verified_key',
        call: 'GET paid',
        provoke: (p, u) => gatewayCall(p, paid(), {}, u),
      },
      {
        surface: 'mcp',
        principal: 'bare_key',
        call: 'call_api',
        provoke: (p, u) => mcp(p, 'call_api', { slug: f.listing.slug, endpoint: '/items/1' }, u),
      },
      {
        surface: 'mcp',
        principal: 'verified_key',
        call: 'call_api',
        provoke: (p, u) => mcp(p, 'call_api', { slug: f.listing.slug, endpoint: '/items/1' }, u),
      },
      { surface: 'cli', principal: 'bare_key', call: callPaid(), provoke: (p, u) => cli(p, callPaid().split(' '), u) },
      // A capped key of an org without credits: the org's credits, not the key's cap, refuse it.
      {
        surface: 'gateway',
        principal: 'capped_key',
        call: 'GET paid',
        provoke: (p, u) => gatewayCall(p, paid(), {}, u),
      },
      {
        surface: 'mcp',
        principal: 'capped_key',
        call: 'call_api',
        provoke: (p, u) => mcp(p, 'call_api', { slug: SLUG, endpoint: '/items/1' }, u),
      },
      {
        surface: 'cli',
        principal: 'verified_key',
        call: callPaid(),
        provoke: (p, u) => cli(p, callPaid().split(' '), u),
      },
    ],
  },
  budget_exceeded: capWalks('budget_cents'),
  per_call_cap_exceeded: capWalks('per_call_max_cents'),
  daily_cap_exceeded: capWalks('daily_cap_cents'),
  price_above_max: {
    walks: [
      {
        surface: 'gateway',
        principal: 'verified_key',
        call: 'GET paid max 1',
        provoke: (p, u) => gatewayCall(p, paid(), { 'x-svc-max-price-cents': '1' }, u),
      },
      {
        surface: 'mcp',
        principal: 'verified_key',
        call: 'call_api',
        provoke: (p, u) => mcp(p, 'call_api', { slug: f.listing.slug, endpoint: '/items/1', max_price_cents: 1 }, u),
      },
      {
        surface: 'cli',
        principal: 'verified_key',
        call: `${callPaid()} --max-price 1`,
        provoke: (p, u) => cli(p, `${callPaid()} --max-price 1`.split(' '), u),
      },
    ],
  },
  card_required: {
    unreachable:
      'only auto-reload and the gateway with a card-only org configured; the gateway maps it to add_card, walked by the renderer sweep below',
  },
  forbidden: {
    unreachable:
      'assertOrgAdmin runs after assertSession, and every session is an owner or admin (users.role): no principal reaches it',
  },
  insufficient_scope: {
    walks: [
      {
        surface: 'rest',
        principal: 'bare_key',
        call: 'POST /v1/billing/checkout',
        provoke: (p) => rest(p, 'POST', '/v1/billing/checkout', { pack: 'starter' }),
      },
      {
        surface: 'mcp',
        principal: 'bare_key',
        call: 'create_checkout',
        provoke: (p, u) => mcp(p, 'create_checkout', { pack: 'starter' }, u),
      },
      {
        surface: 'cli',
        principal: 'bare_key',
        call: 'billing checkout --pack starter',
        provoke: (p, u) => cli(p, ['billing', 'checkout', '--pack', 'starter'], u),
      },
    ],
  },
  key_revoked: {
    walks: [
      { surface: 'rest', principal: 'revoked_key', call: 'GET /v1/me', provoke: (p) => rest(p, 'GET', '/v1/me') },
      {
        surface: 'gateway',
        principal: 'revoked_key',
        call: 'GET paid',
        provoke: (p, u) => gatewayCall(p, paid(), {}, u),
      },
      { surface: 'cli', principal: 'revoked_key', call: 'balance', provoke: (p, u) => cli(p, ['balance'], u) },
    ],
  },
  org_suspended: { unreachable: 'only an operator suspends an org (svc-admin); its people ask the operator' },
  free_only_key: {
    walks: [
      {
        surface: 'gateway',
        principal: 'capped_key',
        call: 'GET paid',
        cap: 'approval_mode',
        provoke: (p, u) => gatewayCall(p, paid(), {}, u),
      },
    ],
  },
  cap_escalation: {
    walks: [
      {
        surface: 'mcp',
        principal: 'capped_key',
        call: 'set_budget',
        cap: 'per_call_max_cents',
        provoke: (p, u) => mcp(p, 'set_budget', { per_call_max_cents: 1000 }, u),
      },
      {
        surface: 'cli',
        principal: 'capped_key',
        call: 'budget set --per-call-max 1000',
        cap: 'per_call_max_cents',
        provoke: (p, u) => cli(p, ['budget', 'set', '--per-call-max', '1000'], u),
      },
    ],
  },
  csrf_failed: {
    walks: [
      {
        surface: 'web',
        principal: 'session',
        call: 'POST /dashboard/keys',
        noStep: 'the form was stale: the page says to reload it and links home',
        provoke: (p) => web(p, 'POST', '/dashboard/keys', { name: 'no token' }),
      },
    ],
  },
  not_found: {
    walks: [
      {
        surface: 'mcp',
        principal: 'verified_key',
        call: 'get_my_profile',
        provoke: (p, u) => mcp(p, 'get_my_profile', {}, u),
      },
      {
        surface: 'mcp',
        principal: 'verified_key',
        call: 'provider_get_api',
        provoke: (p, u) => mcp(p, 'provider_get_api', { api_id: 'api_nope' }, u),
      },
      {
        surface: 'mcp',
        principal: 'verified_key',
        call: 'get_provider_profile',
        provoke: (p, u) => mcp(p, 'get_provider_profile', { slug: 'no-such-provider' }, u),
      },
      {
        surface: 'web',
        principal: 'session',
        call: 'GET /dashboard/no-such-page',
        noStep: 'the 404 page links home',
        provoke: (p) => web(p, 'GET', '/dashboard/no-such-page'),
      },
    ],
  },
  listing_not_found: {
    walks: [
      {
        surface: 'gateway',
        principal: 'verified_key',
        call: 'GET nope',
        provoke: (p, u) => gatewayCall(p, '/nope-api/x', {}, u),
      },
      {
        surface: 'mcp',
        principal: 'verified_key',
        call: 'call_api',
        provoke: (p, u) => mcp(p, 'call_api', { slug: 'nope-api', endpoint: '/x' }, u),
      },
      {
        surface: 'cli',
        principal: 'verified_key',
        call: 'call nope-api /x',
        provoke: (p, u) => cli(p, ['call', 'nope-api', '/x'], u),
      },
      {
        surface: 'web',
        principal: 'keyless',
        call: 'GET /apis/no-such-listing',
        noStep: 'the 404 page links home and to the catalog',
        provoke: (p) => web(p, 'GET', '/apis/no-such-listing'),
      },
      {
        surface: 'web',
        principal: 'session',
        call: 'GET /apis/no-such-listing',
        noStep: 'the 404 page links home and to the catalog',
        provoke: (p) => web(p, 'GET', '/apis/no-such-listing'),
      },
    ],
  },
  endpoint_not_found: {
    walks: [
      {
        surface: 'gateway',
        principal: 'verified_key',
        call: 'GET nope endpoint',
        provoke: (p, u) => gatewayCall(p, `/${f.listing.slug}/no/such/endpoint`, {}, u),
      },
      {
        surface: 'mcp',
        principal: 'verified_key',
        call: 'call_api',
        provoke: (p, u) => mcp(p, 'call_api', { slug: f.listing.slug, endpoint: '/no/such/endpoint' }, u),
      },
      {
        surface: 'cli',
        principal: 'verified_key',
        call: `call ${SLUG} /no/such/endpoint`,
        provoke: (p, u) => cli(p, ['call', f.listing.slug, '/no/such/endpoint'], u),
      },
    ],
  },
  method_not_allowed: { ownInput: 'the method is not served on that path: the caller uses the documented one' },
  conflict: { ownInput: 'the named thing already exists or is in use; the detail names it' },
  invalid_state: { ownInput: 'the resource is not in a state that allows it; the detail names the state' },
  idempotency_conflict: { ownInput: 'an Idempotency-Key reused with another request: the caller picks a new key' },
  payload_too_large: { ownInput: 'the body is over the limit: the caller sends less' },
  unsupported_media_type: { ownInput: 'the content type is not JSON: the caller fixes its own request' },
  import_failed: { ownInput: 'the OpenAPI document could not be imported; the detail names why' },
  verification_failed: {
    ownInput: "the provider's upstream did not answer the check; the provider fixes base URL or credentials",
  },
  terms_not_accepted: {
    walks: [
      {
        surface: 'gateway',
        principal: 'verified_key',
        call: 'GET terms ping',
        provoke: (p, u) => gatewayCall(p, `/${termsSlug}/ping`, {}, u),
      },
      {
        surface: 'mcp',
        principal: 'verified_key',
        call: 'call_api',
        provoke: (p, u) => mcp(p, 'call_api', { slug: termsSlug, endpoint: '/ping' }, u),
      },
      {
        surface: 'cli',
        principal: 'verified_key',
        call: 'call terms /ping',
        provoke: (p, u) => cli(p, ['call', termsSlug, '/ping'], u),
      },
    ],
  },
  rate_limited: {
    walks: [
      {
        surface: 'gateway',
        principal: 'verified_key',
        call: 'GET free ping',
        rateLimited: true,
        provoke: (p, u) => gatewayCall(p, `/${SLUG}/ping`, {}, u),
      },
      {
        surface: 'mcp',
        principal: 'verified_key',
        call: 'call_api',
        rateLimited: true,
        provoke: (p, u) => mcp(p, 'call_api', { slug: SLUG, endpoint: '/ping' }, u),
      },
      {
        surface: 'cli',
        principal: 'verified_key',
        call: `call ${SLUG} /ping`,
        rateLimited: true,
        provoke: (p, u) => cli(p, ['call', SLUG, '/ping'], u),
      },
    ],
  },
  too_many_attempts: {
    ownInput: 'too many wrong login codes: the person waits for Retry-After and asks for a new code',
  },
  headers_too_large: { ownInput: 'the request headers are over the limit: the caller sends fewer' },
  internal: { unreachable: 'a bug, not a refusal: its step is the request id to quote to the operator' },
  upstream_error: { unreachable: "the provider's upstream failed: nothing for the caller to do but retry later" },
  payment_backend_error: { unreachable: 'the payment processor failed: nothing for the caller to do but retry later' },
  unavailable: { unreachable: 'the service is down or draining: the caller retries later' },
  busy: { unreachable: 'load shedding: the caller retries after Retry-After' },
  upstream_timeout: { unreachable: "the provider's upstream timed out: nothing for the caller to do but retry later" },
};

function capWalks(cap: NonNullable<Walk['cap']>): Entry {
  return {
    walks: [
      {
        surface: 'gateway',
        principal: 'capped_key',
        call: 'GET paid',
        cap,
        provoke: (p, u) => gatewayCall(p, paid(), {}, u),
      },
      {
        surface: 'mcp',
        principal: 'capped_key',
        call: 'call_api',
        cap,
        provoke: (p, u) => mcp(p, 'call_api', { slug: f.listing.slug, endpoint: '/items/1' }, u),
      },
      {
        surface: 'cli',
        principal: 'capped_key',
        call: callPaid(),
        cap,
        provoke: (p, u) => cli(p, callPaid().split(' '), u),
      },
    ],
  };
}

const CAP_SEED: Record<NonNullable<Walk['cap']>, Parameters<typeof seedKey>[2]> = {
  budget_cents: { budgetCents: 1 },
  per_call_max_cents: { perCallMaxCents: 1 },
  daily_cap_cents: { dailyCapCents: 1 },
  approval_mode: { approvalMode: 'free_only' },
};

/** A fresh principal of the walk's kind, in the state the walk needs (credits to spend, a cap to hit). */
function principalFor(code: ErrorCode, walk: Walk): Promise<Principal> {
  const needsCredits = ['verified_key', 'capped_key'].includes(walk.principal) && code !== 'insufficient_credits';
  return makePrincipal(walk.principal, {
    ...(needsCredits ? { credits: 100 } : {}),
    ...(walk.rateLimited ? { rateLimit: 1 } : {}),
    ...(walk.cap
      ? { cap: CAP_SEED[walk.cap] }
      : walk.principal === 'capped_key'
        ? { cap: { budgetCents: 1000 } } // a cap that does not bite
        : {}),
  });
}

// ---------------------------------------------------------------------------------------------------------------

beforeAll(async () => {
  f = await startMcpFixture();
  const terms = await createLiveListing(f.h.control.url, f.provider.key, {
    baseUrl: f.upstream.url,
    slug: TERMS_SLUG,
    prices: {},
  });
  termsSlug = terms.slug;
  const doc = await call(f.h.control.url, 'POST', '/v1/provider/documents', {
    token: f.provider.key,
    body: {
      kind: 'terms',
      source: 'hosted',
      version: '1.0.0',
      markdown: '# Terms\nBe nice.',
      api_id: terms.apiId,
      acceptance_mode: 'required',
    },
  });
  expect(doc.status).toBe(201);
  const act = await call(f.h.control.url, 'POST', `/v1/provider/documents/${doc.body.document_id}/activate`, {
    token: f.provider.key,
  });
  expect(act.status).toBe(200);
  spec = (await call(f.h.control.url, 'GET', '/v1/openapi.json')).body;
  const t = new StreamableHTTPClientTransport(new URL(f.endpoint));
  const client = new Client({ name: 'next-step-walker', version: '1.0.0' });
  await client.connect(t);
  toolNames = new Set((await client.listTools()).tools.map((x) => x.name));
  await client.close();
}, 90_000);

afterAll(async () => {
  await f?.stop();
  for (const c of homes) c();
});

describe('the next-step walker', () => {
  it('has an entry for every error code of the catalog', () => {
    expect(Object.keys(WALK).sort()).toEqual(Object.keys(CODES).sort());
  });

  const walked = Object.entries(WALK).flatMap(([code, entry]) =>
    'walks' in entry ? entry.walks.map((w) => [code as ErrorCode, w] as const) : [],
  );
  it.concurrent.each(
    walked.map(([code, w]) => [`${code} · ${w.surface} · ${w.principal} · ${w.call}`, code, w] as const),
  )(
    '%s: the step it is given leads somewhere',
    async (_name, code, walk) => {
      const p = await principalFor(code, walk);
      const refusal = await walk.provoke(p);
      expect(refusal.code, JSON.stringify(refusal.given)).toBe(code);
      await follow(walk, p, refusal);
    },
    120_000,
  ); // walks run concurrently: each spawns processes and waits on the gateway's change feed

  // Every action, as each surface renders it, names something that exists there (a refusal the matrix cannot
  // provoke today, like card_required or rate_limited, still renders through these).
  it('every action renders, on every surface, to a real page, tool or command', async () => {
    const actions: NextStep[] = [
      { action: 'authenticate' },
      { action: 'log_in' },
      { action: 'verify_email' },
      { action: 'ask_org_admin' },
      { action: 'get_key' },
      { action: 'buy_credits' },
      { action: 'add_card' },
      { action: 'raise_cap', cap: 'budget' },
      { action: 'raise_cap', cap: 'per_call' },
      { action: 'raise_cap', cap: 'daily' },
      { action: 'raise_cap', cap: 'approval_mode' },
      { action: 'accept_terms', slug: termsSlug },
      { action: 'check_price', slug: f.listing.slug },
      { action: 'find_listing' },
      { action: 'list_endpoints', slug: f.listing.slug },
      { action: 'retry_later' },
    ];
    const org = await seedOrg(f.db);
    for (const step of actions) {
      for (const r of routesNamed(restNextStep(step)))
        expect(routeExists(r.method, r.path), `${step.action}: REST names ${r.method} ${r.path}`).toBe(true);
      const w = webNextStep(step);
      if (w.href !== null) {
        await expectPage(w.href);
        await expectPage(w.href, org.session);
      }
      const m = renderNextStep(step, { control: f.h.control.url }, 'call_api');
      if ('url' in m) await expectPage(m.url, org.session);
      else expect(toolNames.has(m.tool), `${step.action}: MCP names ${m.tool}`).toBe(true);
      let line = cliNextStep(step, { slug: f.listing.slug, endpoint: '/items/1', command: 'svc balance' });
      for (const [ph, v] of Object.entries(PLACEHOLDER)) line = line.replaceAll(ph, v({ kind: 'keyless', email: '' }));
      await expectParses(line.split(' '));
    }
  });
});
