/**
 * The floor under any MCP server on node:http that relays calls to the gateway (issue 11 item 7): a bare node:http
 * listener that reads each POST's JSON-RPC body, makes the gateway call with undici (one keep-alive Pool and the
 * MCP hop's own dispatch handler, `collect` of core/gateway-calls.ts, with an Idempotency-Key from the request id),
 * and answers a JSON-RPC result carrying the gateway's status and body. No MCP logic at all: no auth, no session, no
 * schema, no SDK. bench/mcp.bench.ts runs it as a row, so MCP's CPU per call reads against what node:http and undici
 * alone cost on this machine. `node dist/bench/mcp-floor-relay.js <port> <gateway call URL> <key>`; prints `ready`
 * once listening.
 */
import { createServer } from 'node:http';
import { Pool } from 'undici';
import { collect } from '../core/gateway-calls.js';

const [port, target, key] = process.argv.slice(2) as [string, string, string];
const url = new URL(target);
const pool = new Pool(url.origin, { connections: 128, keepAliveTimeout: 30_000 });
const path = url.pathname + url.search;

/** The gateway call, collected as MCP's hop collects it. */
async function call(idempotencyKey: string): Promise<{ status: number; body: string }> {
  const r = await collect(pool, {
    method: 'GET',
    path,
    headers: { authorization: `Bearer ${key}`, 'idempotency-key': idempotencyKey },
  });
  return { status: r.statusCode, body: r.body.toString('utf8') };
}

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
