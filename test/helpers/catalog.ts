/**
 * Catalog/provider test helpers, shared with other engineers: a local file server for OpenAPI documents, a stub
 * upstream that records requests, and `createLiveListing` which goes through the real provider REST routes.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './processes.js';
import { call } from './http.js';

export const FIXTURES = join(ROOT, 'test/fixtures/openapi');
export function fixture(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(FIXTURES, name), 'utf8')) as Record<string, unknown>;
}

export interface LocalServer {
  url: string;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function closer(server: Server): () => Promise<void> {
  return () =>
    new Promise((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
}

/** Serves `routes[path]` (string bodies as-is, objects as JSON); anything else is 404. */
export async function serveDocuments(routes: Record<string, string | object>): Promise<LocalServer> {
  const server = createServer((req, res) => {
    const body = routes[req.url ?? ''];
    if (body === undefined) return res.writeHead(404).end('not found');
    res
      .writeHead(200, { 'content-type': typeof body === 'string' ? 'text/plain' : 'application/json' })
      .end(typeof body === 'string' ? body : JSON.stringify(body));
  });
  const url = await listen(server);
  return { url, close: closer(server) };
}

export interface StubUpstream extends LocalServer {
  requests: { method: string; url: string; headers: IncomingMessage['headers'] }[];
}

/**
 * A stand-in upstream API: every path answers 200 JSON echoing method and path, except `/fail*` (500).
 * With `requireBearer`, requests without `Authorization: Bearer <it>` get 401.
 */
export async function startStubUpstream(opts: { requireBearer?: string } = {}): Promise<StubUpstream> {
  const requests: StubUpstream['requests'] = [];
  const server = createServer((req, res) => {
    requests.push({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers });
    if (opts.requireBearer && req.headers.authorization !== `Bearer ${opts.requireBearer}`)
      return res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
    if ((req.url ?? '').startsWith('/fail'))
      return res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"boom"}');
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ ok: true, method: req.method, path: req.url }));
  });
  const url = await listen(server);
  return { url, requests, close: closer(server) };
}

/** A small OpenAPI 3 document: GET /ping (no params), GET /items/{id}, POST /items. */
export function smallOpenApi(title = 'Test API', extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    openapi: '3.0.3',
    info: { title, version: '1.0.0', description: `${title}. A small API used in tests.` },
    paths: {
      '/ping': { get: { operationId: 'ping', summary: 'Ping', responses: { '200': { description: 'ok' } } } },
      '/items/{id}': {
        get: {
          operationId: 'getItem',
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
          responses: { '200': { description: 'ok' } },
        },
      },
      '/items': {
        post: {
          operationId: 'createItem',
          requestBody: { content: { 'application/json': { schema: { type: 'object' } } } },
          responses: { '201': { description: 'created' } },
        },
      },
    },
    ...extra,
  };
}

export interface LiveListing {
  apiId: string;
  slug: string;
  /** `METHOD /path` -> endpoint_id */
  endpoints: Record<string, string>;
}

/**
 * Creates, prices and publishes a listing through the REST routes (skip_verify unless `verify`).
 * `prices` maps `METHOD /path` to cents; unpriced endpoints stay free.
 */
export async function createLiveListing(
  controlUrl: string,
  token: string,
  opts: {
    openapiBody?: Record<string, unknown>;
    baseUrl: string;
    prices?: Record<string, number>;
    name?: string;
    slug?: string;
    category?: string;
    tags?: string[];
    secret?: string;
    verify?: boolean;
  },
): Promise<LiveListing> {
  const created = await call(controlUrl, 'POST', '/v1/provider/apis', {
    token,
    body: {
      body: opts.openapiBody ?? smallOpenApi(opts.name ?? 'Test API'),
      base_url: opts.baseUrl,
      ...(opts.name ? { name: opts.name } : {}),
      ...(opts.slug ? { slug: opts.slug } : {}),
      ...(opts.category ? { category: opts.category } : {}),
      ...(opts.tags ? { tags: opts.tags } : {}),
    },
  });
  if (created.status !== 201)
    throw new Error(`create listing failed: ${created.status} ${JSON.stringify(created.body)}`);
  const apiId = created.body.api_id as string;
  const endpoints: Record<string, string> = {};
  for (const e of created.body.endpoints as { endpoint_id: string; method: string; path: string }[])
    endpoints[`${e.method} ${e.path}`] = e.endpoint_id;
  if (opts.secret) {
    const r = await call(controlUrl, 'PUT', `/v1/provider/apis/${apiId}/credentials`, {
      token,
      body: { secret: opts.secret },
    });
    if (r.status !== 200) throw new Error(`credentials failed: ${r.status} ${JSON.stringify(r.body)}`);
  }
  const priced = Object.entries(opts.prices ?? {}).map(([k, price_cents]) => {
    const endpoint_id = endpoints[k];
    if (!endpoint_id) throw new Error(`no endpoint ${k}; have ${Object.keys(endpoints).join(', ')}`);
    return { endpoint_id, price_cents };
  });
  if (priced.length) {
    const r = await call(controlUrl, 'PUT', `/v1/provider/apis/${apiId}/pricing`, {
      token,
      body: { endpoints: priced },
    });
    if (r.status !== 200) throw new Error(`pricing failed: ${r.status} ${JSON.stringify(r.body)}`);
  }
  const pub = await call(controlUrl, 'POST', `/v1/provider/apis/${apiId}/publish`, {
    token,
    body: { accept_terms: true, skip_verify: !opts.verify },
  });
  if (pub.status !== 200) throw new Error(`publish failed: ${pub.status} ${JSON.stringify(pub.body)}`);
  return { apiId, slug: created.body.slug as string, endpoints };
}

/**
 * A listing straight into the DB with catalog fields (name, summary, category, tags), for search and leaderboard
 * tests that need hundreds of listings; the FTS index follows through the migration's triggers.
 */
export async function insertListing(
  h: import('../../core/db/database.js').DbHandles,
  o: {
    orgId: string;
    slug: string;
    name: string;
    summary?: string;
    description?: string;
    category?: string;
    tags?: string[];
    status?: 'draft' | 'live';
    suspended?: boolean;
    publishedAt?: number;
    lastVerifyOk?: number | null;
    endpoints: { method: string; path: string; priceCents: number }[];
  },
): Promise<{ apiId: string; endpointIds: string[] }> {
  const { newId } = await import('../../core/ids.js');
  const now = Date.now();
  const apiId = newId('api');
  await h.db
    .insertInto('apis')
    .values({
      id: apiId,
      org_id: o.orgId,
      slug: o.slug,
      name: o.name,
      summary: o.summary ?? '',
      description: o.description ?? '',
      category: o.category ?? 'other',
      tags: JSON.stringify(o.tags ?? []),
      base_url: 'http://127.0.0.1:9',
      docs_url: null,
      logo_url: null,
      health_path: null,
      status: o.status ?? 'live',
      suspended_at: o.suspended ? now : null,
      suspended_reason: null,
      source_kind: 'body',
      source_url: null,
      openapi_json: null,
      secret_enc: null,
      secret_fingerprint: null,
      injection_name: null,
      published_at: (o.status ?? 'live') === 'live' ? (o.publishedAt ?? now) : null,
      publish_terms_accepted_at: now,
      last_verified_at: null,
      last_verify_ok: o.lastVerifyOk ?? null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  const endpointIds: string[] = [];
  for (const [i, e] of o.endpoints.entries()) {
    const id = newId('ep');
    endpointIds.push(id);
    await h.db
      .insertInto('endpoints')
      .values({
        id,
        api_id: apiId,
        method: e.method,
        path: e.path,
        operation_id: null,
        request_schema_json: null,
        response_schema_json: null,
        price_cents: e.priceCents,
        position: i,
        removed_at: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
  }
  return { apiId, endpointIds };
}
