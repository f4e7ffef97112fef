/**
 * HTTP for the CLI on node:http(s) rather than fetch: it loads faster (cold start matters for a CLI called in
 * loops) and hands back the response as a stream, so `svc call` can relay bytes untouched.
 */
import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { CliFailure } from './failure.js';

export interface SendOptions {
  method: string;
  headers?: OutgoingHttpHeaders;
  body?: string | Buffer | Readable;
}

export async function send(url: string, opts: SendOptions): Promise<IncomingMessage> {
  const u = new URL(url);
  const request = u.protocol === 'https:' ? (await import('node:https')).request : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(u, { method: opts.method, headers: { 'user-agent': 'svc-cli', ...opts.headers } }, resolve);
    req.on('error', (e: NodeJS.ErrnoException) =>
      reject(
        new CliFailure(
          'api',
          'connection_failed',
          `Cannot reach ${u.origin} (${e.code ?? e.message}); is the stack running?`,
          null,
          'npm start   (or set SVC_API_URL / SVC_GATEWAY_URL)',
        ),
      ),
    );
    const body = opts.body;
    if (body === undefined || typeof body === 'string' || Buffer.isBuffer(body)) req.end(body);
    else body.pipe(req);
  });
}

export async function readAll(res: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

export function isProblem(res: IncomingMessage): boolean {
  return (res.headers['content-type'] ?? '').startsWith('application/problem+json');
}
