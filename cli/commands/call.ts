/**
 * `svc call <slug> <endpoint>`: a gateway call with the API key. The upstream's body goes to stdout byte for byte
 * (binary safe); the price charged and the balance left go to stderr, or into the JSON with `--json`. `--quote`
 * asks the gateway's free quote and calls nothing. An upstream status of 400 or more exits 1 (body still relayed,
 * and with `--json` still in the document, with the charge and the request id).
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { valueFlag } from '../args.js';
import { config, failureFrom, parseAnswer } from '../client.js';
import { svcCommand } from '../command.js';
import { CliFailure, usageError } from '../failure.js';
import { isProblem, readAll, send } from '../http.js';
import { dollars, isJson, note } from '../output.js';

export default svcCommand({
  meta: { name: 'call', description: 'Call an API through the gateway (needs an API key)' },
  args: {
    slug: { type: 'positional', description: 'Listing slug' },
    endpoint: { type: 'positional', description: 'Endpoint path, e.g. current or /users/42' },
    method: { type: 'string', alias: 'X', description: 'HTTP method (default GET, or POST with a body)' },
    data: { type: 'string', alias: 'd', description: "Request body; '@file' reads a file, '@-' stdin" },
    input: { type: 'string', description: "Request body from a file ('@file' or a path; '-' is stdin)" },
    query: { type: 'string', alias: 'q', description: 'Query parameter name=value (repeatable)' },
    header: { type: 'string', alias: 'H', description: "Request header 'Name: value' (repeatable)" },
    'max-price': valueFlag('cents', 'Refuse (uncharged) if the price is above this many cents'),
    'idempotency-key': { type: 'string', description: 'Retries with the same key are not charged twice' },
    quote: { type: 'boolean', description: 'Ask the price and whether the call would pass; calls nothing' },
  },
  multiple: ['query', 'header'],
  examples: [
    'svc call demo-weather current --query city=lisbon',
    'svc call demo-weather forecast -q city=porto --max-price 3 --idempotency-key order-17',
    'svc call demo-weather forecast -q city=porto --quote',
  ],
  async run({ args }) {
    const cfg = config();
    if (!cfg.apiKey)
      throw new CliFailure(
        'api',
        'api_key_required',
        'Calls need an API key; none is configured',
        401,
        'svc provision',
      );
    const { slug } = args;
    const endpoint = args.endpoint.replace(/^\/+/, '');
    const hint = { slug, endpoint };
    const qs = new URLSearchParams();
    for (const q of args.query) {
      const i = q.indexOf('=');
      if (i <= 0) throw usageError(`--query takes name=value, got '${q}'`);
      qs.append(q.slice(0, i), q.slice(i + 1));
    }
    const headers: Record<string, string> = { authorization: `Bearer ${cfg.apiKey}` };
    for (const h of args.header) {
      const i = h.indexOf(':');
      if (i <= 0) throw usageError(`--header takes 'Name: value', got '${h}'`);
      headers[h.slice(0, i).trim().toLowerCase()] = h.slice(i + 1).trim();
    }
    if (args['max-price'] !== undefined) headers['x-svc-max-price-cents'] = args['max-price'];
    if (args['idempotency-key']) headers['idempotency-key'] = args['idempotency-key'];
    const body = _body(args.data, args.input);
    if (body && !headers['content-type']) headers['content-type'] = body.type;
    const method = (args.method ?? (body ? 'POST' : 'GET')).toUpperCase();
    const search = qs.toString();
    const path = `/${encodeURIComponent(slug)}/${endpoint}${search ? `?${search}` : ''}`;
    if (args.quote) {
      const res = await send(`${cfg.gatewayUrl}/_quote${path}`, { method, headers });
      const text = (await readAll(res)).toString('utf8');
      const status = res.statusCode ?? 0;
      if (status >= 400) throw failureFrom(status, text, isProblem(res), hint);
      // Loaded here: zod and the schemas cost a plain call's cold start more than the call itself.
      const { QuoteSchema } = await import('../../core/schemas/catalog.schemas.js');
      const q = parseAnswer(QuoteSchema, text, status);
      return {
        data: q,
        human: `${dollars(q.price_cents)} per call; ${q.would_pass ? 'would pass' : `would be refused (${q.code})`}${q.available_cents === null ? '' : `; ${dollars(q.available_cents)} available`}`,
      };
    }
    const res = await send(cfg.gatewayUrl + path, { method, headers, ...(body ? { body: body.data } : {}) });
    const status = res.statusCode ?? 0;
    const meta = _meta(res);
    if (isProblem(res) && status >= 400) {
      const text = (await readAll(res)).toString('utf8');
      throw failureFrom(status, text, true, hint);
    }
    const upstreamFailed = (data?: unknown) =>
      new CliFailure('api', 'upstream_status', `The API answered ${status}`, status, null, meta.request_id, data);
    if (isJson()) {
      const raw = await readAll(res);
      const type = String(res.headers['content-type'] ?? '');
      const data = { status, content_type: type || null, ...meta, ..._encode(raw, type) };
      if (status >= 400) throw upstreamFailed(data);
      return { data };
    }
    const endsWithNewline = await _relay(res);
    // On a terminal the status line (stderr) would be glued to a body's last line that has no newline.
    if (!endsWithNewline && process.stdout.isTTY) process.stdout.write('\n');
    note(
      `${status} · charged ${dollars(meta.charged_cents)} · balance ${dollars(meta.balance_cents)}${meta.idempotent_replay ? ' · replay (not charged)' : ''} · ${meta.request_id ?? ''}`,
    );
    if (status >= 400) throw upstreamFailed();
    return { data: { status, ...meta }, human: '' };
  },
});

/** Copies the body to stdout untouched; true when it was empty or ended with a newline. */
async function _relay(res: IncomingMessage): Promise<boolean> {
  let last = 0x0a;
  for await (const chunk of res) {
    const buf = chunk as Buffer;
    if (buf.length === 0) continue;
    last = buf.at(-1) ?? last;
    if (!process.stdout.write(buf)) await new Promise((r) => process.stdout.once('drain', r));
  }
  return last === 0x0a;
}

function _num(v: string | string[] | undefined): number | null {
  const n = Number(Array.isArray(v) ? v[0] : v);
  return v === undefined || Number.isNaN(n) ? null : n;
}

function _meta(res: IncomingMessage) {
  const id = res.headers['x-svc-request-id'];
  return {
    request_id: typeof id === 'string' ? id : null,
    price_cents: _num(res.headers['x-svc-price-cents']),
    charged_cents: _num(res.headers['x-svc-charged-cents']),
    balance_cents: _num(res.headers['x-svc-balance-cents']),
    idempotent_replay: res.headers['x-svc-idempotent-replay'] === 'true',
  };
}

/** JSON bodies as JSON, text as text, anything else base64 (so `--json` output stays one valid document). */
function _encode(raw: Buffer, type: string): { body?: unknown; body_base64?: string } {
  if (/json/.test(type)) {
    try {
      return { body: JSON.parse(raw.toString('utf8')) };
    } catch {
      /* fall through */
    }
  }
  if (/^text\/|xml|json|javascript/.test(type)) return { body: raw.toString('utf8') };
  return { body_base64: raw.toString('base64') };
}

function _body(data: string | undefined, input: string | undefined) {
  if (data !== undefined && input !== undefined) throw usageError('use --data or --input, not both');
  const spec = data ?? (input === undefined ? undefined : input.startsWith('@') ? input : `@${input}`);
  if (spec === undefined) return null;
  if (spec.startsWith('@')) {
    const file = spec.slice(1);
    if (file === '-') return { data: process.stdin, type: 'application/octet-stream' };
    try {
      const buf = readFileSync(file);
      return { data: buf, type: _looksJson(buf.toString('utf8')) ? 'application/json' : 'application/octet-stream' };
    } catch {
      throw usageError(`cannot read ${file}`);
    }
  }
  return { data: spec, type: _looksJson(spec) ? 'application/json' : 'text/plain' };
}

function _looksJson(s: string): boolean {
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
}
