/**
 * The floor under any MCP server on node:http that relays calls to the gateway (issue 11 item 7): a bare node:http
 * listener that reads each POST's JSON-RPC body, makes the gateway call (with an Idempotency-Key from the request id)
 * and answers a JSON-RPC result carrying the gateway's status and body. No MCP logic at all: no auth, no session, no
 * schema, no SDK. bench/mcp.bench.ts runs it as rows, so MCP's CPU per call reads against what node:http and the hop's
 * HTTP client alone cost on this machine.
 *
 * Two clients for the gateway call: `svc` (default), the MCP hop's own pool and collector (core/gateway-calls.ts, svc's
 * HTTP/1.1 client), which is the floor under MCP as it is built; and `undici`, one keep-alive undici Pool with a plain
 * dispatch handler, the floor as issue 11 defined it (MCP's hop used undici until issue 28).
 * `node dist/bench/mcp-floor-relay.js <port> <gateway call URL> <key> [svc|undici]`; prints `ready` once listening.
 */
import { createServer } from 'node:http';
import { Pool } from 'undici';
import { createHopPool } from '../core/gateway-calls.js';
import { collect } from '../core/http1/pool.js';

const [port, target, key, client = 'svc'] = process.argv.slice(2) as [string, string, string, string?];
const url = new URL(target);
const path = url.pathname + url.search;

/** The gateway call through svc's HTTP/1.1 client: the MCP hop's pool and collector. */
function viaSvc(): (idempotencyKey: string) => Promise<{ status: number; body: string }> {
  const pool = createHopPool();
  return async (idempotencyKey) => {
    const r = await collect(pool, url.origin, {
      method: 'GET',
      path,
      headers: { authorization: `Bearer ${key}`, 'idempotency-key': idempotencyKey },
      body: null,
    });
    return { status: r.status, body: r.body.toString('utf8') };
  };
}

/** The gateway call through undici's lowest-level API: a plain dispatch handler, not `request()`'s Readable body. */
function viaUndici(): (idempotencyKey: string) => Promise<{ status: number; body: string }> {
  const pool = new Pool(url.origin, { connections: 128, keepAliveTimeout: 30_000 });
  return (idempotencyKey) =>
    new Promise((resolve, reject) => {
      let status = 0;
      const chunks: Buffer[] = [];
      pool.dispatch(
        { method: 'GET', path, headers: { authorization: `Bearer ${key}`, 'idempotency-key': idempotencyKey } },
        {
          onRequestStart() {},
          onResponseStart(_c, s) {
            status = s;
            chunks.length = 0;
          },
          onResponseData(_c, chunk) {
            chunks.push(chunk);
          },
          onResponseEnd() {
            resolve({ status, body: (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString('utf8') });
          },
          onResponseError(_c, err) {
            reject(err);
          },
        },
      );
    });
}

if (client !== 'svc' && client !== 'undici')
  throw new Error(`mcp-floor-relay: client must be svc or undici, not ${client}`);
const call = client === 'undici' ? viaUndici() : viaSvc();

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const rpc = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string | number };
    call(`floor_${String(rpc.id)}`).then(
      (a) => {
        const body = JSON.stringify({ jsonrpc: '2.0', id: rpc.id, result: { status: a.status, body: a.body } });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
      },
      () => res.writeHead(502).end(),
    );
  });
});
server.listen(Number(port), '127.0.0.1', () => console.log('ready'));
// A clean exit on SIGTERM (bench/procs.ts stopChild), so a `--cpu-prof` run writes its profile.
process.once('SIGTERM', () => server.close(() => process.exit(0)));
