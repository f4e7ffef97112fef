/**
 * The MCP host's HTTP edge: health, OAuth protected-resource metadata, and `/mcp` for both protocol eras.
 * Order on `/mcp`: Host/Origin check → credential (401) → the scope a tools/call needs (403) → era routing:
 * 2026-07-28 requests go to the SDK's stateless handler; 2025-era requests get our SQLite-backed sessions in front of
 * a per-request transport. HTTP-level refusals are problem+json with `code` and `request_id`.
 */
import { Hono, type Context } from 'hono';
import {
  WebStandardStreamableHTTPServerTransport,
  createMcpHandler,
  isInitializeRequest,
  isLegacyRequest,
  type AuthInfo,
} from '@modelcontextprotocol/server';
import type { AppContext } from '../control/context.js';
import { SvcError } from '../core/errors.js';
import { newId } from '../core/ids.js';
import { PROBLEM_CONTENT_TYPE, problemOf, toSvcError } from '../core/problem.js';
import { ALL_SCOPES } from '../core/scopes.js';
import { stepUpScope } from '../control/oauth/step-up.js';
import { ANONYMOUS, callerFromBearer, hasScope, type Caller } from './auth.js';
import type { ControlCalls } from './control-calls.js';
import type { GatewayCalls } from './gateway-calls.js';
import { allowedHostnames, rebindingRefusal } from './http-guard.js';
import { buildServer, serverFactory } from './server.js';
import type { McpSession, McpSessionStore } from './sessions.js';
import type { ToolEnv } from './tool-kit.js';
import { TOOL_SCOPES } from './tools/index.js';

export interface McpAppDeps {
  ctx: AppContext;
  sessions: McpSessionStore;
  control: ControlCalls;
  gateway: GatewayCalls;
}

const MAX_BODY = 4 * 1024 * 1024;
type Env = { Bindings: { incoming?: { socket?: { remoteAddress?: string } } } };

export function createMcpApp(deps: McpAppDeps): Hono<Env> {
  const { ctx, sessions } = deps;
  const config = ctx.config;
  const allowed = allowedHostnames(config);
  const modern = createMcpHandler(serverFactory, { legacy: 'reject', responseMode: 'json' });
  const app = new Hono<Env>();

  /** This server's public origin: SVC_MCP_URL, or the request's own origin on an ephemeral test port. */
  const originOf = (c: Context<Env>) =>
    config.ports.mcp === 0 ? new URL(c.req.url).origin : config.urls.mcp.replace(/\/+$/, '');
  const metadataUrl = (c: Context<Env>) => `${originOf(c)}/.well-known/oauth-protected-resource/mcp`;

  const problem = (err: SvcError, headers: Record<string, string> = {}) => {
    const requestId = newId('req');
    return new Response(JSON.stringify(problemOf(err, requestId)), {
      status: err.status,
      headers: { 'content-type': PROBLEM_CONTENT_TYPE, 'x-svc-request-id': requestId, ...headers },
    });
  };
  const challenge = (c: Context<Env>, extra = '') => ({
    'www-authenticate': `Bearer resource_metadata="${metadataUrl(c)}"${extra}`,
  });

  app.get('/healthz', (c) => c.json({ ok: true, process: 'mcp' }));
  const resourceMetadata = (c: Context<Env>) =>
    c.json({
      resource: `${originOf(c)}/mcp`,
      authorization_servers: [config.urls.control.replace(/\/+$/, '')],
      bearer_methods_supported: ['header'],
      scopes_supported: [...ALL_SCOPES],
      resource_name: 'svc marketplace MCP server',
    });
  app.get('/.well-known/oauth-protected-resource', resourceMetadata);
  app.get('/.well-known/oauth-protected-resource/mcp', resourceMetadata);

  app.all('/mcp', async (c) => {
    const req = c.req.raw;
    const refusal = rebindingRefusal(
      allowed,
      req.headers.get('host') ?? undefined,
      req.headers.get('origin') ?? undefined,
    );
    if (refusal) return problem(new SvcError('forbidden', `${refusal} (DNS-rebinding protection)`));
    const method = req.method.toUpperCase();
    if (method !== 'POST' && method !== 'GET' && method !== 'DELETE') {
      return problem(new SvcError('method_not_allowed', `${method} is not served on /mcp`), {
        allow: 'POST, GET, DELETE',
      });
    }

    // Read the body once: the scope check and era routing need it, and the SDK takes it as parsedBody.
    let parsed: unknown;
    let bodyText = '';
    if (method === 'POST') {
      bodyText = await req.text();
      if (bodyText.length > MAX_BODY) return problem(new SvcError('payload_too_large', `Body over ${MAX_BODY} bytes`));
      try {
        parsed = JSON.parse(bodyText);
      } catch {
        parsed = undefined; // the SDK answers -32700
      }
    }
    // What the SDK reads: the original request when the body is already parsed (the SDK then never reads it), else a
    // copy with the body text, so the SDK can answer -32700 itself.
    const forward = () =>
      parsed !== undefined || method !== 'POST'
        ? req
        : new Request(req.url, { method, headers: req.headers, body: bodyText });

    const resource = `${originOf(c)}/mcp`;
    let caller: Caller = ANONYMOUS;
    const auth = req.headers.get('authorization');
    if (auth) {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
      if (!m) return problem(new SvcError('unauthorized', 'Authorization must be "Bearer <token>"'), challenge(c));
      try {
        caller = await callerFromBearer(ctx, m[1]!, resource);
      } catch (e) {
        const err = toSvcError(e);
        if (err.code === 'internal') throw e;
        return problem(err, challenge(c, ', error="invalid_token"'));
      }
    }

    const legacy = await isLegacyRequest(forward(), parsed);
    let session: McpSession | undefined;
    const sessionId = req.headers.get('mcp-session-id');
    if (legacy && sessionId) {
      session = await sessions.get(sessionId);
      if (!session) {
        return problem(new SvcError('not_found', 'Unknown, ended or expired Mcp-Session-Id: send initialize again'));
      }
      if (method === 'DELETE') {
        await sessions.end(sessionId);
        return new Response(null, { status: 204 });
      }
      if (!auth && session.key) {
        try {
          caller = await callerFromBearer(ctx, session.key, resource);
        } catch (e) {
          const err = toSvcError(e);
          if (err.code === 'internal') throw e;
          return problem(err, challenge(c, ', error="invalid_token"'));
        }
      }
    }
    if (legacy && method === 'GET') {
      return problem(new SvcError('method_not_allowed', 'This server offers no standalone SSE stream; POST requests'), {
        allow: 'POST, DELETE',
      });
    }
    if (legacy && method === 'DELETE') {
      return problem(new SvcError('validation_failed', 'DELETE /mcp needs the Mcp-Session-Id header'));
    }

    if (caller.kind === 'anonymous' && config.isProduction) {
      return problem(
        new SvcError('unauthorized', 'Send Authorization: Bearer <API key or OAuth access token>'),
        challenge(c),
      );
    }
    const needed = scopeNeeded(parsed);
    if (needed) {
      if (caller.kind === 'anonymous') {
        return problem(
          new SvcError('unauthorized', `${needed.tool} needs a credential with ${needed.scope}`),
          challenge(c, `, scope="${needed.scope}"`),
        );
      }
      if (!hasScope(caller, needed.scope)) {
        // An elevatable registered key gets a one-time `svc_key:` handle in the scope, so the OAuth approval
        // verifies an email for this key's org and elevates the same key (spec §3; control/oauth/step-up.ts).
        const keyId = caller.principal?.keyId;
        const scope = caller.key && keyId ? await stepUpScope(ctx, { keyId, plaintext: caller.key }) : needed.scope;
        return problem(
          new SvcError(
            'insufficient_scope',
            `${needed.tool} needs ${needed.scope}: a person verifies an email for this org (OAuth sign-in does it) and the same key gains it`,
            { extra: { required_scope: needed.scope } },
          ),
          {
            'www-authenticate': `Bearer error="insufficient_scope", scope="${scope}", resource_metadata="${metadataUrl(c)}"`,
          },
        );
      }
    }

    const ip = c.env.incoming?.socket?.remoteAddress ?? 'unknown';
    const env: ToolEnv = {
      ctx,
      config,
      control: deps.control,
      gateway: deps.gateway,
      caller,
      ip,
      idempotencyScope: session?.id ?? caller.principal?.keyId ?? `ip:${ip}`,
      bindKey: async () => false,
    };
    let boundKey: { id: string; plaintext: string } | undefined;
    env.bindKey = async (key) => {
      env.caller = { kind: 'api_key', principal: undefined, key: key.plaintext };
      if (session) {
        await sessions.bindKey(session.id, key);
        return true;
      }
      // An initialize that registers in the same request: bound when its session is created below.
      boundKey = key;
      return false;
    };
    const authInfo: AuthInfo = {
      token: caller.key ?? '',
      clientId: caller.kind,
      scopes: caller.principal ? [...caller.principal.scopes] : [],
      extra: { toolEnv: env },
    };

    if (!legacy) return modern.fetch(forward(), { authInfo, ...(parsed === undefined ? {} : { parsedBody: parsed }) });

    const res = await serveLegacy(forward(), parsed, authInfo);
    if (!session && parsed !== undefined && isInitializeRequest(parsed) && res.status === 200) {
      const key =
        caller.key && caller.principal?.keyId
          ? { id: caller.principal.keyId, plaintext: caller.key }
          : (boundKey ?? null);
      const created = await sessions.create(String(parsed.params.protocolVersion), key);
      const headers = new Headers(res.headers);
      headers.set('mcp-session-id', created.id);
      return new Response(res.body, { status: res.status, headers });
    }
    return res;
  });

  app.notFound(() => problem(new SvcError('not_found', 'Not found: the MCP endpoint is /mcp')));
  app.onError((e) => {
    const err = toSvcError(e);
    if (err.code === 'internal') ctx.log.error('mcp request failed', { err: e instanceof Error ? e : String(e) });
    return problem(err);
  });
  return app;
}

/** 2025-era request: a server and stateless transport per request, answering JSON (sessions live in SQLite). */
async function serveLegacy(req: Request, parsed: unknown, authInfo: AuthInfo): Promise<Response> {
  const server = buildServer();
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  try {
    return await transport.handleRequest(req, { authInfo, ...(parsed === undefined ? {} : { parsedBody: parsed }) });
  } finally {
    void transport.close().catch(() => {});
    void server.close().catch(() => {});
  }
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
