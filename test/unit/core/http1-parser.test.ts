/**
 * The upstream client's response parser against hostile and odd answers: every refusal has its case, and the
 * accepted framings parse the same whole or fed one byte at a time.
 */
import { describe, expect, it, vi } from 'vitest';
import { ResponseParser, UpstreamParseError, type ResponseHead } from '../../../core/http1/response-parser.js';

const LIMITS = { maxHeaderBytes: 1024, maxHeaderCount: 8 };

interface Parsed {
  head: ResponseHead | null;
  body: string;
  ended: boolean;
  keepAlive: boolean;
  leftover: number;
}

/** Feeds `input` in pieces of `step` bytes (0 = whole), then `eof` if asked; returns what came out. */
function parse(input: string, opts: { step?: number; head?: boolean; eof?: boolean } = {}): Parsed {
  const p = new ResponseParser(LIMITS);
  p.start(opts.head ?? false);
  const out: Parsed = { head: null, body: '', ended: false, keepAlive: false, leftover: 0 };
  const buf = Buffer.from(input, 'latin1');
  const step = opts.step || buf.length;
  const drain = () => {
    for (let ev = p.next(); ev !== null; ev = p.next()) {
      if (ev.kind === 'head') out.head = ev.head;
      else if (ev.kind === 'data') out.body += ev.chunk.toString('latin1');
      else {
        out.ended = true;
        out.keepAlive = ev.keepAlive;
      }
    }
  };
  for (let i = 0; i < buf.length; i += step) {
    p.push(buf.subarray(i, i + step));
    drain();
  }
  if (opts.eof && !out.ended) {
    const ev = p.eof();
    if (ev.kind === 'end') {
      out.ended = true;
      out.keepAlive = ev.keepAlive;
    }
  }
  out.leftover = p.buffered;
  return out;
}

function refusal(input: string, opts: { step?: number; head?: boolean; eof?: boolean } = {}): string {
  try {
    parse(input, opts);
  } catch (e) {
    expect(e).toBeInstanceOf(UpstreamParseError);
    return (e as UpstreamParseError).reason;
  }
  return 'accepted';
}

describe('upstream response parser: accepted framings', () => {
  for (const step of [0, 1, 7]) {
    it(`Content-Length body (fed ${step || 'whole'})`, () => {
      const r = parse('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello', { step });
      expect(r.head).toMatchObject({
        status: 200,
        contentLength: 5,
        keepAlive: true,
        headers: [
          ['content-type', 'text/plain'],
          ['content-length', '5'],
        ],
      });
      expect(r).toMatchObject({ body: 'hello', ended: true, keepAlive: true, leftover: 0 });
    });

    it(`chunked body with extensions and trailers, trailers dropped (fed ${step || 'whole'})`, () => {
      const r = parse(
        'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;name=v\r\nhello\r\n1 \r\n!\r\n0\r\nX-Trailer: t\r\n\r\n',
        { step },
      );
      expect(r.head).toMatchObject({ status: 200, contentLength: null, keepAlive: true });
      expect(r).toMatchObject({ body: 'hello!', ended: true, keepAlive: true, leftover: 0 });
    });
  }

  it('skips 1xx interim answers (100, 103 with headers) and parses the real one', () => {
    const r = parse(
      'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok',
    );
    expect(r.head?.status).toBe(201);
    expect(r.body).toBe('ok');
  });

  it('reads no body for HEAD, 204 and 304, whatever the framing headers say', () => {
    const head = parse('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n', { head: true });
    expect(head).toMatchObject({ ended: true, body: '', keepAlive: true });
    expect(head.head?.contentLength).toBe(100);
    expect(parse('HTTP/1.1 204 No Content\r\n\r\n')).toMatchObject({ ended: true, body: '', keepAlive: true });
    expect(parse('HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n')).toMatchObject({
      ended: true,
      body: '',
    });
  });

  it('reads to close without framing headers, and such a socket is not reused', () => {
    const r = parse('HTTP/1.1 200 OK\r\n\r\nsome bytes', { eof: true });
    expect(r).toMatchObject({ body: 'some bytes', ended: true, keepAlive: false });
  });

  it('Connection: close and HTTP/1.0 end keep-alive; a Keep-Alive timeout is read', () => {
    expect(parse('HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n').keepAlive).toBe(false);
    expect(parse('HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n').keepAlive).toBe(false);
    const r = parse('HTTP/1.1 200 OK\r\nKeep-Alive: timeout=5\r\nContent-Length: 0\r\n\r\n');
    expect(r.head?.keepAliveMs).toBe(5000);
    expect(r.keepAlive).toBe(true);
  });

  it('bytes past the declared length stay unread (the client then drops the socket)', () => {
    expect(parse('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA').leftover).toBe(5);
  });

  it('trims optional whitespace around values and accepts an empty reason phrase', () => {
    expect(parse('HTTP/1.1 200 \r\nX-A: \t v \t\r\nContent-Length: 0\r\n\r\n').head?.headers).toEqual([
      ['x-a', 'v'],
      ['content-length', '0'],
    ]);
    expect(parse('HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n').head?.status).toBe(200);
  });
});

describe('upstream response parser: refusals', () => {
  it.each([
    ['bare LF in the status line', 'HTTP/1.1 200 OK\nContent-Length: 0\r\n\r\n', 'bare_lf'],
    ['bare LF ending the head', 'HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\n', 'bare_lf'],
    ['bare LF after a header', 'HTTP/1.1 200 OK\r\nX-A: 1\nContent-Length: 0\r\n\r\n', 'bare_lf'],
    ['bare CR inside a value', 'HTTP/1.1 200 OK\r\nX-A: 1\rX-B: 2\r\n\r\n', 'bare_cr'],
    ['bare CR ending a value', 'HTTP/1.1 200 OK\r\nX-A: 1\r\r\n\r\n', 'bare_cr'],
    ['bare CR in the status line', 'HTTP/1.1 200 O\rK\r\n\r\n', 'bare_cr'],
    ['obs-fold', 'HTTP/1.1 200 OK\r\nX-A: 1\r\n  folded\r\nContent-Length: 0\r\n\r\n', 'obs_fold'],
    ['a tab-led continuation', 'HTTP/1.1 200 OK\r\nX-A: 1\r\n\tfolded\r\n\r\n', 'obs_fold'],
    ['space before the colon', 'HTTP/1.1 200 OK\r\nContent-Length : 0\r\n\r\n', 'invalid_header_name'],
    ['a non-token name', 'HTTP/1.1 200 OK\r\nX(A): 1\r\n\r\n', 'invalid_header_name'],
    ['a line without colon', 'HTTP/1.1 200 OK\r\nnocolon\r\n\r\n', 'invalid_header_line'],
    ['an empty name', 'HTTP/1.1 200 OK\r\n: v\r\n\r\n', 'invalid_header_line'],
    ['a NUL in a value', 'HTTP/1.1 200 OK\r\nX-A: a\0b\r\n\r\n', 'invalid_header_value'],
    ['a control character in a value', 'HTTP/1.1 200 OK\r\nX-A: a\x01b\r\n\r\n', 'invalid_header_value'],
    ['HTTP/2.0 on the status line', 'HTTP/2.0 200 OK\r\n\r\n', 'invalid_status_line'],
    ['a non-numeric status', 'HTTP/1.1 2x0 OK\r\n\r\n', 'invalid_status_line'],
    ['a status out of range', 'HTTP/1.1 099 Low\r\n\r\n', 'invalid_status_line'],
    ['a status past 599', 'HTTP/1.1 600 High\r\n\r\n', 'invalid_status_line'],
    ['an empty first line', '\r\nHTTP/1.1 200 OK\r\n\r\n', 'invalid_status_line'],
    ['lower-case protocol name', 'http/1.1 200 OK\r\n\r\n', 'invalid_status_line'],
    [
      'repeated equal Content-Length',
      'HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx',
      'duplicate_content_length',
    ],
    [
      'conflicting Content-Length',
      'HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nxx',
      'duplicate_content_length',
    ],
    ['a Content-Length list', 'HTTP/1.1 200 OK\r\nContent-Length: 1, 2\r\n\r\nx', 'invalid_content_length'],
    ['a negative Content-Length', 'HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n', 'invalid_content_length'],
    ['a signed Content-Length', 'HTTP/1.1 200 OK\r\nContent-Length: +1\r\n\r\nx', 'invalid_content_length'],
    ['a hex Content-Length', 'HTTP/1.1 200 OK\r\nContent-Length: 0x10\r\n\r\n', 'invalid_content_length'],
    ['a huge Content-Length', `HTTP/1.1 200 OK\r\nContent-Length: ${'9'.repeat(16)}\r\n\r\n`, 'invalid_content_length'],
    [
      'Content-Length with Transfer-Encoding',
      'HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      'content_length_with_transfer_encoding',
    ],
    ['Transfer-Encoding gzip', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n', 'unsupported_transfer_encoding'],
    [
      'chunked then gzip',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n',
      'unsupported_transfer_encoding',
    ],
    [
      'chunked twice',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n',
      'unsupported_transfer_encoding',
    ],
    ['a non-hex chunk size', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', 'invalid_chunk_size'],
    ['an empty chunk size', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\r\n', 'invalid_chunk_size'],
    ['a negative chunk size', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n', 'invalid_chunk_size'],
    [
      'a chunk size past 2^48',
      `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${'f'.repeat(13)}\r\n`,
      'invalid_chunk_size',
    ],
    ['bare LF after a chunk size', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\nx\r\n', 'bare_lf'],
    [
      'chunk data not followed by CRLF',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nxy\r\n0\r\n\r\n',
      'invalid_chunk_end',
    ],
    [
      'a chunk line past 1 KiB',
      `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;${'e'.repeat(2000)}`,
      'chunk_line_too_long',
    ],
    [
      'trailers past the header limit',
      `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n${'X-T: t\r\n'.repeat(200)}\r\n`,
      'trailers_too_large',
    ],
    [
      'obs-fold in trailers',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-T: 1\r\n folded\r\n\r\n',
      'obs_fold',
    ],
    ['bare LF in trailers', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-T: 1\n\r\n', 'bare_lf'],
    ['headers past the byte limit', `HTTP/1.1 200 OK\r\nX-Big: ${'b'.repeat(2000)}\r\n\r\n`, 'headers_too_large'],
    ['an endless head', `HTTP/1.1 200 OK\r\n${'X-A: 1\r\n'.repeat(300)}`, 'headers_too_large'],
    ['more header lines than allowed', `HTTP/1.1 200 OK\r\n${'X-A: 1\r\n'.repeat(9)}\r\n`, 'too_many_headers'],
    ['101 Switching Protocols', 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n', 'unexpected_upgrade'],
  ])('refuses %s', (_name, input, reason) => {
    expect(refusal(input)).toBe(reason);
    expect(refusal(input, { step: 1 })).toBe(reason);
  });

  it('a connection closed before the headers, or mid-body (length or chunked), is an error', () => {
    expect(refusal('HTTP/1.1 200 OK\r\nContent-', { eof: true })).toBe('closed_before_headers');
    expect(refusal('', { eof: true })).toBe('closed_before_headers');
    expect(refusal('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc', { eof: true })).toBe('closed_mid_body');
    expect(refusal('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab', { eof: true })).toBe(
      'closed_mid_body',
    );
  });
});

describe('upstream response parser: work bounded by the bytes received', () => {
  it('a head trickled in one byte per read is copied a bounded number of times, not once per read', () => {
    // A hostile upstream sending its 15 KB head one byte at a time made the parser copy the unfinished head on
    // every read (over 180 MB allocated for this 13.5 KB head, ~100 ms of event loop). Count what the parser allocates to hold it.
    const head = `HTTP/1.1 200 OK\r\n${'X-Header-Line: 0123456789\r\n'.repeat(500)}Content-Length: 0\r\n\r\n`;
    const bytes = Buffer.from(head, 'latin1');
    const pieces = Array.from(bytes, (b) => Buffer.from([b])); // allocated before counting starts
    let allocated = 0;
    const count = (n: number) => {
      allocated += n;
    };
    const realConcat = Buffer.concat.bind(Buffer);
    const realSlow = Buffer.allocUnsafeSlow.bind(Buffer);
    const realUnsafe = Buffer.allocUnsafe.bind(Buffer);
    const realAlloc = Buffer.alloc.bind(Buffer);
    const spies = [
      vi.spyOn(Buffer, 'concat').mockImplementation((list, total) => {
        const out = realConcat(list, total);
        count(out.length);
        return out;
      }),
      vi.spyOn(Buffer, 'allocUnsafeSlow').mockImplementation((n) => (count(n), realSlow(n))),
      vi.spyOn(Buffer, 'allocUnsafe').mockImplementation((n) => (count(n), realUnsafe(n))),
      vi.spyOn(Buffer, 'alloc').mockImplementation((n, ...rest) => (count(n), realAlloc(n, ...rest))),
    ];
    try {
      const p = new ResponseParser({ maxHeaderBytes: 16 * 1024, maxHeaderCount: 512 });
      p.start(false);
      let parsed: ResponseHead | null = null;
      for (const piece of pieces) {
        p.push(piece);
        const ev = p.next();
        if (ev?.kind === 'head') parsed = ev.head;
      }
      expect(parsed?.headers.length).toBe(501);
    } finally {
      for (const s of spies) s.mockRestore();
    }
    expect(allocated).toBeLessThan(8 * bytes.length);
  });
});
