/**
 * Answers for requests Node's HTTP parser rejects before the app sees them (headers over the limit, malformed
 * request lines): problem+json with a request id and `Connection: close`, instead of Node's bare status line.
 */
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { SvcError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { PROBLEM_CONTENT_TYPE, problemOf } from '../../core/problem.js';

/** `server` is the node:http server `@hono/node-server` returns (typed there as http or http2). */
export function answerClientErrors(server: unknown): void {
  (server as Server).on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT')
      return void socket.end('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
    const e =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? new SvcError('headers_too_large', 'Request headers exceed the limit (16 KiB).')
        : new SvcError('validation_failed', 'Malformed HTTP request.');
    const requestId = newId('req');
    const body = JSON.stringify(problemOf(e, requestId));
    socket.end(
      `HTTP/1.1 ${e.status} ${e.status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
        `Content-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Svc-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
