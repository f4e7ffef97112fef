/**
 * The checks a request on `/mcp` passes before any MCP work, in one order, for both ways a request is served: the
 * SDK path (mcp/app.ts) and the tools/call fast path (mcp/fast-tool-call.ts), so a rule lives once.
 * Order: Host/Origin (DNS rebinding) → method → body (size, JSON) → bearer → era → 2025 session (lookup, DELETE, key
 * binding) → era-specific method refusals → production anonymous refusal → the scope a tools/call needs (step-up).
 * A refusal is an answer (status, headers, problem+json body); a pass carries the caller and the ToolEnv to run with.
 */
import { classifyInboundRequest, type InboundClassificationOutcome } from '@modelcontextprotocol/server';
import type { AppContext } from '../control/context.js';
import { stepUpScope } from '../control/oauth/step-up.js';
import { SvcError } from '../core/errors.js';
import { newId } from '../core/ids.js';
import { PROBLEM_CONTENT_TYPE, problemOf, toSvcError } from '../core/problem.js';
import { ANONYMOUS, callerFromBearer, hasScope, type Caller } from './auth.js';
import type { GatewayCalls } from '../core/gateway-calls.js';
import { allowedHostnames, rebindingRefusal } from './http-guard.js';
import type { McpSession, McpSessionStore } from './sessions.js';
import type { PrincipalCache } from './principal-cache.js';
import type { ToolEnv } from './tool-kit.js';
import { TOOL_SCOPES } from './tools/index.js';

export interface McpAppDeps {
  ctx: AppContext;
  sessions: McpSessionStore;
  gateway: GatewayCalls;
  /** API keys' principals kept in memory (the MCP process); without it every request reads the key. */
  principals?: PrincipalCache;
}

export const MAX_BODY = 4 * 1024 * 1024;

/** What the gate reads of an HTTP request, whichever server object carries it. */
export interface McpHttpRequest {
  /** Upper-case. */
  method: string;
  /** A header by its lower-case name. */
  header(name: string): string | undefined;
  /** The POST body's text, read once. */
  text(): Promise<string>;
  /** A POST body the caller already read, parsed and classified (the fast path), so it is not done twice. */
  readBody?: { text: string; parsed: unknown; era: Era };
  /** The request's own origin (`http://host:port`), used on an ephemeral test port. */
  requestOrigin(): string;
  ip: string;
}

/** A finished HTTP answer: status, headers and body text (null: no body). */
export interface HttpAnswer {
  status: number;
  headers: Record<string, string>;
  body: string | null;
}

export interface GatePass {
  /** 2025-era (sessions in front of the SDK's transport) rather than 2026-07-28. */
  legacy: boolean;
  /** The SDK's own classification of the request; undefined for a POST without a JSON body. */
  route: InboundClassificationOutcome | undefined;
  bodyText: string;
  /** The JSON body; undefined when there is none or it does not parse (the SDK answers -32700). */
  parsed: unknown;
  session: McpSession | undefined;
  /** Who the checks admitted (env.caller can change later: a tool that mints a key binds it). */
  caller: Caller;
  env: ToolEnv;
  /** A key svc_register / provision_access minted in a request that had no session yet. */
  boundKey(): { id: string; plaintext: string } | undefined;
}

export type GateResult = { answer: HttpAnswer } | { pass: GatePass };

export type RequestGate = (req: McpHttpRequest) => Promise<GateResult>;

export function problemAnswer(err: SvcError, headers: Record<string, string> = {}): HttpAnswer {
  const requestId = newId('req');
  return {
    status: err.status,
    headers: { 'content-type': PROBLEM_CONTENT_TYPE, 'x-svc-request-id': requestId, ...headers },
    body: JSON.stringify(problemOf(err, requestId)),
  };
}

/** Anything thrown while serving: an SvcError as its problem, anything else logged and answered `internal`. */
export function failureAnswer(ctx: Pick<AppContext, 'log'>, e: unknown): HttpAnswer {
  const err = toSvcError(e);
  if (err.code === 'internal') ctx.log.error('mcp request failed', { err: e instanceof Error ? e : String(e) });
  return problemAnswer(err);
}

/** This server's public origin: SVC_MCP_URL, or the request's own origin on an ephemeral test port. */
export function publicOrigin(config: AppContext['config'], req: Pick<McpHttpRequest, 'requestOrigin'>): string {
  return config.ports.mcp === 0 ? req.requestOrigin() : config.urls.mcp.replace(/\/+$/, '');
}

export const metadataUrlOf = (origin: string) => `${origin}/.well-known/oauth-protected-resource/mcp`;

/**
 * The era as the SDK's `isLegacyRequest` decides it (the same classifier, `classifyInboundRequest`, on the parsed
 * body): a POST without a JSON body is 2025-era, otherwise the classifier's `legacy` outcome is.
 */
export interface Era {
  legacy: boolean;
  route: InboundClassificationOutcome | undefined;
}

export function eraOf(method: string, header: McpHttpRequest['header'], parsed: unknown): Era {
  if (method === 'POST' && parsed === undefined) return { legacy: true, route: undefined };
  const route = classifyInboundRequest({
    httpMethod: method,
    protocolVersionHeader: header('mcp-protocol-version'),
    mcpMethodHeader: header('mcp-method'),
    mcpNameHeader: header('mcp-name'),
    ...(parsed === undefined ? {} : { body: parsed }),
  });
  return { legacy: route.kind === 'legacy', route };
}

/** The JSON value of a body, or undefined when it is empty or not JSON. */
export function parseJsonBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

// Long: builds the one gate every MCP request passes; its checks run in a fixed order and share the parsed body and
// session.
export function createRequestGate(deps: McpAppDeps): RequestGate {
  const { ctx, sessions } = deps;
  const config = ctx.config;
  const allowed = allowedHostnames(config);

  // Long: the gate's checks in their fixed order (DNS rebinding, body, session, credential, scope of the tool called,
  // era); each step needs the ones before.
  return async (req) => {
    const refusal = rebindingRefusal(allowed, req.header('host'), req.header('origin'));
    if (refusal) return { answer: problemAnswer(new SvcError('forbidden', `${refusal} (DNS-rebinding protection)`)) };
    const method = req.method;
    if (method !== 'POST' && method !== 'GET' && method !== 'DELETE') {
      return {
        answer: problemAnswer(new SvcError('method_not_allowed', `${method} is not served on /mcp`), {
          allow: 'POST, GET, DELETE',
        }),
      };
    }

    // Read the body once: the scope check and era routing need it, and the SDK takes it as parsedBody.
    let parsed: unknown;
    let bodyText = '';
    if (method === 'POST') {
      const read = req.readBody;
      bodyText = read ? read.text : await req.text();
      if (bodyText.length > MAX_BODY) {
        return { answer: problemAnswer(new SvcError('payload_too_large', `Body over ${MAX_BODY} bytes`)) };
      }
      parsed = read ? read.parsed : parseJsonBody(bodyText);
    }

    const origin = publicOrigin(config, req);
    const resource = `${origin}/mcp`;
    const challenge = (extra = '') => ({
      'www-authenticate': `Bearer resource_metadata="${metadataUrlOf(origin)}"${extra}`,
    });
    const asCaller = async (token: string): Promise<Caller | HttpAnswer> => {
      try {
        return await callerFromBearer(ctx, token, resource, deps.principals);
      } catch (e) {
        const err = toSvcError(e);
        if (err.code === 'internal') throw e;
        return problemAnswer(asBearerFailure(err), challenge(', error="invalid_token"'));
      }
    };

    let caller: Caller = ANONYMOUS;
    const auth = req.header('authorization');
    if (auth) {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
      if (!m) {
        return {
          answer: problemAnswer(new SvcError('unauthorized', 'Authorization must be "Bearer <token>"'), challenge()),
        };
      }
      const c = await asCaller(m[1]!);
      if ('status' in c) return { answer: c };
      caller = c;
    }

    const { legacy, route } = req.readBody?.era ?? eraOf(method, req.header, parsed);
    let session: McpSession | undefined;
    // An initialize starts a new session whatever id it carries, so a client can always start over.
    const sessionId = isInitialize(parsed) ? undefined : req.header('mcp-session-id');
    if (legacy && sessionId) {
      session = await sessions.get(sessionId);
      if (!session) {
        return {
          answer: problemAnswer(
            new SvcError('not_found', 'Unknown, ended or expired Mcp-Session-Id: send initialize again'),
          ),
        };
      }
      if (method === 'DELETE') {
        await sessions.end(sessionId);
        return { answer: { status: 204, headers: {}, body: null } };
      }
      if (!auth && session.key) {
        const c = await asCaller(session.key);
        if ('status' in c) {
          // The bound key no longer works (revoked or unknown: 401): unbind it, so the session is not refused
          // forever. This answer says why; the next request acts keyless (svc_register binds a new key) or with
          // the credential it sends. A suspended org (403) stays refused.
          if (c.status === 401) await sessions.unbindKey(sessionId);
          return { answer: c };
        }
        caller = c;
      }
    }
    if (legacy && method === 'GET') {
      return {
        answer: problemAnswer(
          new SvcError('method_not_allowed', 'This server offers no standalone SSE stream; POST requests'),
          { allow: 'POST, DELETE' },
        ),
      };
    }
    if (legacy && method === 'DELETE') {
      return {
        answer: problemAnswer(new SvcError('validation_failed', 'DELETE /mcp needs the Mcp-Session-Id header')),
      };
    }

    if (caller.kind === 'anonymous' && config.isProduction) {
      return {
        answer: problemAnswer(
          new SvcError('unauthorized', 'Send Authorization: Bearer <API key or OAuth access token>', {
            next: { action: 'authenticate' },
          }),
          challenge(),
        ),
      };
    }
    const needed = scopeNeeded(parsed);
    if (needed) {
      if (caller.kind === 'anonymous') {
        return {
          answer: problemAnswer(
            new SvcError('unauthorized', `${needed.tool} needs a credential with ${needed.scope}`, {
              next: { action: 'authenticate' },
            }),
            challenge(`, scope="${needed.scope}"`),
          ),
        };
      }
      if (!hasScope(caller, needed.scope) && caller.kind === 'api_key' && caller.key && deps.principals) {
        // A cached principal may predate an elevation: read the key again before refusing.
        deps.principals.forget(caller.key);
        const fresh = await asCaller(caller.key);
        if ('status' in fresh) return { answer: fresh };
        caller = fresh;
      }
      if (!hasScope(caller, needed.scope)) {
        // An elevatable registered key gets a one-time `svc_key:` handle in the scope, so the OAuth approval
        // verifies an email for this key's org and elevates the same key (spec §3; control/oauth/step-up.ts).
        const keyId = caller.principal?.keyId;
        const scope = caller.key && keyId ? await stepUpScope(ctx, { keyId, plaintext: caller.key }) : needed.scope;
        return {
          answer: problemAnswer(
            new SvcError(
              'insufficient_scope',
              `${needed.tool} needs ${needed.scope}: a person verifies an email for this org (OAuth sign-in does it) and the same key gains it`,
              // The tool an agent can take without a person at a browser: verify_email elevates this same key.
              { extra: { required_scope: needed.scope }, next: { action: 'verify_email' } },
            ),
            {
              'www-authenticate': `Bearer error="insufficient_scope", scope="${scope}", resource_metadata="${metadataUrlOf(origin)}"`,
            },
          ),
        };
      }
    }

    const ip = req.ip;
    const env: ToolEnv = {
      ctx,
      config,
      gateway: deps.gateway,
      caller,
      ip,
      idempotencyScope: session?.id ?? caller.principal?.keyId ?? `ip:${ip}`,
      session: session ? { id: session.id, keyId: session.keyId } : null,
      bindKey: async () => false,
    };
    let boundKey: { id: string; plaintext: string } | undefined;
    env.bindKey = async (key) => {
      env.caller = { kind: 'api_key', principal: key.principal, key: key.plaintext };
      if (session) {
        await sessions.bindKey(session.id, key);
        env.session = { id: session.id, keyId: key.id };
        return true;
      }
      // An initialize that registers in the same request: bound when its session is created (mcp/app.ts).
      boundKey = key;
      return false;
    };
    return {
      pass: { legacy, route, bodyText, parsed, session, caller, env, boundKey: () => boundKey },
    };
  };
}

const isInitialize = (body: unknown): boolean =>
  !!body && typeof body === 'object' && !Array.isArray(body) && (body as { method?: unknown }).method === 'initialize';

/**
 * A bearer that does not work is a 401 with `error="invalid_token"` (RFC 6750 §3.1, the MCP authorization spec),
 * revoked keys included: the REST code `key_revoked` is a 403 there, so here it is `unauthorized` with the reason.
 */
function asBearerFailure(err: SvcError): SvcError {
  if (err.code !== 'key_revoked') return err;
  return new SvcError('unauthorized', `${err.detail}: send another credential (or start a new session)`, {
    extra: { reason: 'key_revoked' },
    next: { action: 'get_key' },
  });
}

/** The scope a tools/call in this body needs beyond a registered key's (billing:write / provider:write). */
function scopeNeeded(body: unknown): { tool: string; scope: 'billing:write' | 'provider:write' } | undefined {
  const msgs = Array.isArray(body) ? body : [body];
  for (const m of msgs) {
    if (!m || typeof m !== 'object') continue;
    const r = m as { method?: unknown; params?: { name?: unknown } };
    if (r.method !== 'tools/call' || typeof r.params?.name !== 'string') continue;
    const scope = TOOL_SCOPES.get(r.params.name);
    if (scope) return { tool: r.params.name, scope };
  }
  return undefined;
}
