/**
 * The MCP host's HTTP edge: health, OAuth protected-resource metadata, and `/mcp` for both protocol eras.
 * Every `/mcp` request first passes the checks of mcp/request-gate.ts (Host/Origin, credential, session, scope);
 * then 2026-07-28 requests go to the SDK's stateless handler and 2025-era requests get our SQLite-backed sessions in
 * front of a per-request transport. A single tools/call usually never gets here: mcp/fast-tool-call.ts answers it
 * in front of this app with the same gate. HTTP-level refusals are problem+json with `code` and `request_id`.
 */
import { Hono, type Context } from 'hono';
import {
  WebStandardStreamableHTTPServerTransport,
  createMcpHandler,
  isInitializeRequest,
  type AuthInfo,
} from '@modelcontextprotocol/server';
import { ALL_SCOPES } from '../core/scopes.js';
import {
  createRequestGate,
  failureAnswer,
  problemAnswer,
  publicOrigin,
  type HttpAnswer,
  type McpAppDeps,
  type McpHttpRequest,
} from './request-gate.js';
import { SvcError } from '../core/errors.js';
import { buildServer, carrying, serverFactory } from './server.js';
import type { ToolEnv } from './tool-kit.js';

export type { McpAppDeps } from './request-gate.js';

type Env = { Bindings: { incoming?: { socket?: { remoteAddress?: string } } } };

const responseOf = (a: HttpAnswer) => new Response(a.body, { status: a.status, headers: a.headers });

/** The ToolEnv and caller as the SDK hands them to a tool handler (`ctx.http.authInfo`). */
export function authInfoOf(env: ToolEnv): AuthInfo {
  const caller = env.caller;
  return {
    token: caller.key ?? '',
    clientId: caller.kind,
    scopes: caller.principal ? [...caller.principal.scopes] : [],
    extra: carrying(env),
  };
}

export function createMcpApp(deps: McpAppDeps): Hono<Env> {
  const { ctx, sessions } = deps;
  const config = ctx.config;
  const gate = createRequestGate(deps);
  const modern = sdkWarningsLogged(ctx.log, () =>
    createMcpHandler(serverFactory, { legacy: 'reject', responseMode: 'json' }),
  );
  const app = new Hono<Env>();

  const originOf = (c: Context<Env>) => publicOrigin(config, { requestOrigin: () => new URL(c.req.url).origin });

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
    const method = req.method.toUpperCase();
    const http: McpHttpRequest = {
      method,
      header: (name) => req.headers.get(name) ?? undefined,
      text: () => req.text(),
      requestOrigin: () => new URL(c.req.url).origin,
      ip: c.env.incoming?.socket?.remoteAddress ?? 'unknown',
    };
    const gated = await gate(http);
    if ('answer' in gated) return responseOf(gated.answer);
    const { legacy, parsed, bodyText, session, env } = gated.pass;

    // What the SDK reads: the original request when the body is already parsed (the SDK then never reads it), else a
    // copy with the body text, so the SDK can answer -32700 itself.
    const forward = () =>
      parsed !== undefined || method !== 'POST'
        ? req
        : new Request(req.url, { method, headers: req.headers, body: bodyText });
    const authInfo = authInfoOf(env);

    if (!legacy) return modern.fetch(forward(), { authInfo, ...(parsed === undefined ? {} : { parsedBody: parsed }) });

    const res = await asBatchAnswer(parsed, await serveLegacy(forward(), parsed, authInfo));
    if (!session && parsed !== undefined && isInitializeRequest(parsed) && res.status === 200) {
      const caller = gated.pass.caller;
      const key =
        caller.key && caller.principal?.keyId
          ? { id: caller.principal.keyId, plaintext: caller.key }
          : (gated.pass.boundKey() ?? null);
      const created = await sessions.create(String(parsed.params.protocolVersion), key);
      const headers = new Headers(res.headers);
      headers.set('mcp-session-id', created.id);
      return new Response(res.body, { status: res.status, headers });
    }
    return res;
  });

  app.notFound(() => responseOf(problemAnswer(new SvcError('not_found', 'Not found: the MCP endpoint is /mcp'))));
  app.onError((e) => responseOf(failureAnswer(ctx, e)));
  return app;
}

/**
 * The SDK's handler prints a plain-text notice on stderr when built for JSON responses (responseMode 'json': we
 * answer JSON on purpose). Every other line of this process is JSON, so the notice goes through the logger.
 */
function sdkWarningsLogged<T>(log: McpAppDeps['ctx']['log'], build: () => T): T {
  const warn = console.warn;
  console.warn = (...args: unknown[]) => log.debug('mcp sdk notice', { notice: args.map(String).join(' ') });
  try {
    return build();
  } finally {
    console.warn = warn;
  }
}

/**
 * JSON-RPC 2.0 §6: a batch is answered with an array, even of one. The SDK's 2025 transport answers a one-request
 * batch with the bare response object, so it is wrapped here (a batch of notifications only stays 202, no body).
 */
async function asBatchAnswer(parsed: unknown, res: Response): Promise<Response> {
  if (!Array.isArray(parsed) || !res.headers.get('content-type')?.startsWith('application/json')) return res;
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return new Response(text, { status: res.status, headers: res.headers });
  }
  const out = Array.isArray(body) ? text : JSON.stringify([body]);
  const headers = new Headers(res.headers);
  headers.delete('content-length');
  return new Response(out, { status: res.status, headers });
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
