/**
 * What the real-client tests put around the clients: where the pinned clients are installed (test/clients, its
 * own node_modules), a recording pass-through in front of the MCP server (which JSON-RPC methods each client sent
 * and what svc answered), and a stand-in Anthropic Messages API on loopback that asks for one tool call.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { type IncomingMessage, type Server, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { REPO } from '../../helpers/cli.js';

export const CLIENTS_DIR = join(REPO, 'test', 'clients');
export const BIN = {
  claude: join(CLIENTS_DIR, 'node_modules', '.bin', 'claude'),
  gemini: join(CLIENTS_DIR, 'node_modules', '.bin', 'gemini'),
  codex: join(CLIENTS_DIR, 'node_modules', '.bin', 'codex'),
} as const;

export function clientsInstalled(): boolean {
  return Object.values(BIN).every((b) => existsSync(b));
}

async function _body(req: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of req) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

async function _listen(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A loopback port free at the time of asking (for a process that must be told its port before it starts). */
export async function freePort(): Promise<number> {
  const s = createServer();
  const url = await _listen(s);
  await new Promise<void>((r) => s.close(() => r()));
  return Number(new URL(url).port);
}

export interface Recorded {
  method: string;
  status: number;
  authorized: boolean;
  userAgent: string;
}

export interface McpRecorder {
  /** The MCP URL to give clients (the recorder's origin + /mcp). */
  url: string;
  calls: Recorded[];
  /** Resolves once a request with this JSON-RPC method (from `calls[since]` on) was answered 2xx; rejects after timeoutMs. */
  waitFor(method: string, timeoutMs: number, since?: number): Promise<Recorded>;
  close(): Promise<void>;
}

/** A pass-through to the MCP server that records each JSON-RPC method and the status svc answered. */
export async function recordMcp(target: string): Promise<McpRecorder> {
  const calls: Recorded[] = [];
  const waiters: { method: string; resolve: (r: Recorded) => void }[] = [];
  const to = new URL(target);
  const server = createServer(async (req, res) => {
    const body = await _body(req);
    let methods: string[] = [];
    try {
      const parsed: unknown = JSON.parse(body.toString('utf8'));
      const msgs = Array.isArray(parsed) ? parsed : [parsed];
      methods = msgs.map((m) => (m && typeof m === 'object' && 'method' in m ? String(m.method) : 'response'));
    } catch {
      methods = [req.method ?? '?'];
    }
    const headers = { ...req.headers, host: to.host };
    const up = request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers }, (upRes) => {
      res.writeHead(upRes.statusCode ?? 502, upRes.headers);
      upRes.pipe(res);
      const status = upRes.statusCode ?? 0;
      for (const method of methods) {
        const rec = {
          method,
          status,
          authorized: Boolean(req.headers.authorization),
          userAgent: String(req.headers['user-agent'] ?? ''),
        };
        calls.push(rec);
        if (status < 300)
          for (const w of waiters.filter((x) => x.method === method)) {
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve(rec);
          }
      }
    });
    up.on('error', () => res.destroy());
    up.end(body);
  });
  const origin = await _listen(server);
  return {
    url: `${origin}/mcp`,
    calls,
    waitFor(method, timeoutMs, since = 0) {
      const seen = calls.slice(since).find((c) => c.method === method && c.status < 300);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no ${method} within ${timeoutMs} ms; saw ${JSON.stringify(calls)}`)),
          timeoutMs,
        );
        waiters.push({
          method,
          resolve: (r) => {
            clearTimeout(timer);
            resolve(r);
          },
        });
      });
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

interface Message {
  role: string;
  content: string | { type: string; content?: unknown; tool_use_id?: string }[];
}

export interface ModelServer {
  url: string;
  /** Every /v1/messages request body. */
  requests: { tools: string[]; messages: Message[] }[];
  /** The tool_result content Claude Code sent back for our tool_use, once it did. */
  toolResults: string[];
  close(): Promise<void>;
}

/**
 * A stand-in for the Anthropic Messages API: a request that offers `tool` gets a tool_use of it with `input`
 * (once; after the tool_result comes back it answers text), anything else gets a short text. Streams SSE when
 * asked to, as Claude Code does.
 */
export async function standInModel(tool: string, input: Record<string, unknown>): Promise<ModelServer> {
  const requests: ModelServer['requests'] = [];
  const toolResults: string[] = [];
  const server = createServer(async (req, res) => {
    const raw = (await _body(req)).toString('utf8');
    if (!req.url?.startsWith('/v1/messages')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"type":"error"}');
      return;
    }
    const body = JSON.parse(raw || '{}') as {
      stream?: boolean;
      tools?: { name: string }[];
      messages?: Message[];
    };
    if (req.url.startsWith('/v1/messages/count_tokens')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"input_tokens":10}');
      return;
    }
    const tools = (body.tools ?? []).map((t) => t.name);
    const messages = body.messages ?? [];
    requests.push({ tools, messages });
    const results = messages.flatMap((m) =>
      Array.isArray(m.content)
        ? m.content.filter((c) => c.type === 'tool_result' && c.tool_use_id === 'toolu_svc_1')
        : [],
    );
    for (const r of results) toolResults.push(JSON.stringify(r.content));
    const content =
      results.length === 0 && tools.includes(tool)
        ? [{ type: 'tool_use', id: 'toolu_svc_1', name: tool, input }]
        : [{ type: 'text', text: results.length > 0 ? 'The call went through svc.' : 'ok' }];
    const stop = content[0]!.type === 'tool_use' ? 'tool_use' : 'end_turn';
    const message = {
      id: `msg_${requests.length}`,
      type: 'message',
      role: 'assistant',
      model: 'claude-stand-in',
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 5 },
    };
    if (!body.stream) {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ ...message, content, stop_reason: stop }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const send = (type: string, data: Record<string, unknown>) =>
      res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    send('message_start', { message: { ...message, content: [], stop_reason: null } });
    content.forEach((block, index) => {
      if (block.type === 'tool_use') {
        send('content_block_start', { index, content_block: { ...block, input: {} } });
        send('content_block_delta', {
          index,
          delta: { type: 'input_json_delta', partial_json: JSON.stringify((block as { input: unknown }).input) },
        });
      } else {
        send('content_block_start', { index, content_block: { type: 'text', text: '' } });
        send('content_block_delta', { index, delta: { type: 'text_delta', text: (block as { text: string }).text } });
      }
      send('content_block_stop', { index });
    });
    send('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } });
    send('message_stop', {});
    res.end();
  });
  const url = await _listen(server);
  return {
    url,
    requests,
    toolResults,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a client to its end (killed after timeoutMs), with only the environment given plus node on PATH. */
export function runClient(
  bin: string,
  args: string[],
  opts: { env: Record<string, string>; cwd: string; timeoutMs: number },
): Promise<Ran> & { stop(): void } {
  // Its own process group: Codex's npm wrapper starts a native binary, and both must end with the test.
  const child: ChildProcess = spawn(bin, args, {
    cwd: opts.cwd,
    detached: true,
    env: { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, NO_COLOR: '1', TERM: 'dumb', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
  });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  const stop = () => {
    try {
      if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  };
  const timer = setTimeout(stop, opts.timeoutMs);
  const done = new Promise<Ran>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
  return Object.assign(done, { stop });
}
