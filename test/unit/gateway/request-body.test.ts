/**
 * A streamed request body and the client socket it pauses (gateway/request-body.ts, respond.ts): whatever paused
 * the socket, the socket flows again before the body ends and before the answer ends. uWS stops reading a paused
 * socket altogether, so a kept-alive connection left paused never reads its next request (the integration side is
 * gateway.streaming.test.ts).
 */
import { describe, expect, it } from 'vitest';
import type { HttpResponse } from '../../../gateway/http-api.js';
import { RequestBody } from '../../../gateway/request-body.js';
import { UwsSink } from '../../../gateway/respond.js';

/** A uWS response that records what was done to it, in order. */
function fakeResponse(): { res: HttpResponse; calls: string[] } {
  const calls: string[] = [];
  const res: HttpResponse = {
    cork: (cb) => {
      cb();
      return res;
    },
    writeStatus: () => res,
    writeHeader: () => res,
    write: () => true,
    end: () => {
      calls.push('end');
      return res;
    },
    endWithoutBody: () => {
      calls.push('end');
      return res;
    },
    onWritable: () => res,
    onAborted: () => res,
    onData: () => res,
    pause: () => void calls.push('pause'),
    resume: () => void calls.push('resume'),
    close: () => {
      calls.push('close');
      return res;
    },
  };
  return { res, calls };
}

const KIB = 1024;
const chunk = (n: number) => new ArrayBuffer(n);

describe('a streamed request body and its socket', () => {
  it('pauses the socket once 256 KiB wait unread, and resumes it when read', async () => {
    const { res, calls } = fakeResponse();
    const body = new RequestBody(res, 10 * 1024 * KIB, () => true);
    for (let i = 0; i < 4; i++) body.feed(chunk(64 * KIB), false);
    expect(calls).toEqual(['pause']);
    body.feed(chunk(64 * KIB), false); // still arriving from the read that paused: held, not paused twice
    expect(calls).toEqual(['pause']);
    body.read();
    await new Promise((r) => setImmediate(r));
    expect(calls).toEqual(['pause', 'resume']);
  });

  it('a body that ends in the read that paused its socket resumes the socket (an ended stream never asks for more)', () => {
    const { res, calls } = fakeResponse();
    const body = new RequestBody(res, 10 * 1024 * KIB, () => true);
    // A chunked body: several chunks per socket read, the pause and the last chunk in one read.
    for (let i = 0; i < 4; i++) body.feed(chunk(64 * KIB), false);
    body.feed(chunk(0), true);
    expect(calls).toEqual(['pause', 'resume']);
    expect(body.readableLength).toBe(256 * KIB);
  });

  it('an answer that ends while the body holds the socket paused resumes it first, once', () => {
    const { res, calls } = fakeResponse();
    const sink = new UwsSink(res, false);
    const body = new RequestBody(res, 10 * 1024 * KIB, () => !sink.aborted);
    sink.beforeEnd(() => body.release());
    for (let i = 0; i < 4; i++) body.feed(chunk(64 * KIB), false);
    sink.send(200, [['content-type', 'text/plain']], 'early');
    body.discard(); // after the answer: nothing more to do to the socket
    expect(calls).toEqual(['pause', 'resume', 'end']);
  });

  it('the same for a streamed answer ending, and never touches a socket it did not pause', () => {
    const paused = fakeResponse();
    const sink = new UwsSink(paused.res, false);
    const body = new RequestBody(paused.res, 10 * 1024 * KIB, () => !sink.aborted);
    sink.beforeEnd(() => body.release());
    sink.begin(200, []);
    for (let i = 0; i < 4; i++) body.feed(chunk(64 * KIB), false);
    sink.end();
    expect(paused.calls).toEqual(['pause', 'resume', 'end']);

    const flowing = fakeResponse();
    const sink2 = new UwsSink(flowing.res, false);
    const body2 = new RequestBody(flowing.res, 10 * 1024 * KIB, () => !sink2.aborted);
    sink2.beforeEnd(() => body2.release());
    body2.feed(chunk(KIB), true);
    sink2.send(200, [], 'ok');
    expect(flowing.calls).toEqual(['end']);
  });
});
