/**
 * The floor under any MCP server on node:http that relays calls to the gateway (issue 11 item 7): a bare node:http
 * listener that reads each POST's JSON-RPC body, makes the gateway call with undici (one keep-alive Pool and a plain
 * dispatch handler that collects the answer, with an Idempotency-Key from the request id),
 * and answers a JSON-RPC result carrying the gateway's status and body. No MCP logic at all: no auth, no session, no
 * schema, no SDK. bench/mcp.bench.ts runs it as a row, so MCP's CPU per call reads against what node:http and undici
 * alone cost on this machine. `node dist/bench/mcp-floor-relay.js <port> <gateway call URL> <key>`; prints `ready`
 * once listening.
 */
import { createServer } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import { Pool, type Dispatcher } from 'undici';

const [port, target, key] = process.argv.slice(2) as [string, string, string];
const url = new URL(target);
const pool = new Pool(url.origin, { connections: 128, keepAliveTimeout: 30_000 });
const path = url.pathname + url.search;

/**
 * One request on the pool, its whole answer collected into a Buffer: undici's lowest-level API, a plain dispatch
 * handler rather than `pool.request()`'s Readable body. (MCP's own hop used this until it moved to svc's HTTP/1.1
 * client, core/gateway-calls.ts; the floor stays on undici, as issue 11 defined it.)
 */
function collect(
  opts: Dispatcher.DispatchOptions,
): Promise<{ statusCode: number; headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    let statusCode = 0;
    let headers: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    pool.dispatch(opts, {
      onRequestStart() {},
      onResponseStart(_c, status, h) {
        statusCode = status;
        headers = h;
        chunks.length = 0;
      },
      onResponseData(_c, chunk) {
        chunks.push(chunk);
      },
      onResponseEnd() {
        resolve({ statusCode, headers, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) });
      },
      onResponseError(_c, err) {
        reject(err);
      },
    });
  });
}

/** The gateway call. */
async function call(idempotencyKey: string): Promise<{ status: number; body: string }> {
  const r = await collect({
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
