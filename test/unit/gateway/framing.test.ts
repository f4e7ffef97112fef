import { describe, expect, it } from 'vitest';
import { MAX_HEADER_LINES, checkFraming } from '../../../gateway/framing.js';
import { withoutParam } from '../../../gateway/steps/forward.js';
import type { Headers } from '../../../gateway/respond.js';

const h = (...lines: [string, string][]): Headers => [['host', 'x'], ...lines];

describe('checkFraming (RFC 9112 request framing)', () => {
  it('reads the body framing of well-formed requests', () => {
    expect(checkFraming('GET', h())).toEqual({ ok: true, contentLength: -1, chunked: false });
    expect(checkFraming('POST', h(['content-length', '12']))).toEqual({ ok: true, contentLength: 12, chunked: false });
    expect(checkFraming('POST', h(['content-length', '3'], ['content-length', '3']))).toMatchObject({
      ok: true,
      contentLength: 3,
    });
    expect(checkFraming('PUT', h(['transfer-encoding', 'chunked']))).toEqual({
      ok: true,
      contentLength: -1,
      chunked: true,
    });
    expect(checkFraming('PUT', h(['transfer-encoding', 'Chunked']))).toMatchObject({ ok: true, chunked: true });
  });

  it.each([
    ['transfer-encoding', [['transfer-encoding', 'gzip']]],
    ['transfer-encoding', [['transfer-encoding', 'chunked, identity']]],
    [
      'transfer-encoding',
      [
        ['transfer-encoding', 'chunked'],
        ['transfer-encoding', 'chunked'],
      ],
    ],
    [
      'transfer-encoding',
      [
        ['transfer-encoding', 'chunked'],
        ['content-length', '3'],
      ],
    ],
    [
      'transfer-encoding',
      [
        ['content-length', 'x'],
        ['transfer-encoding', 'chunked'],
      ],
    ],
    [
      'content-length',
      [
        ['content-length', '3'],
        ['content-length', '4'],
      ],
    ],
    ['content-length', [['content-length', '1'.repeat(16)]]],
    ['content-length', [['content-length', ' 3']]],
  ] as [string, [string, string][]][])('refuses %s framing %j with 400 naming the header', (name, lines) => {
    const f = checkFraming('POST', h(...lines));
    expect(f.ok).toBe(false);
    if (f.ok) return;
    expect(f.error.code).toBe('validation_failed');
    expect(f.error.status).toBe(400);
    expect(JSON.stringify(f.error.errors).toLowerCase()).toContain(`header:${name}`);
  });

  it('refuses a method it does not relay with 405 and Allow, and too many header lines with 431', () => {
    const m = checkFraming('CONNECT', h());
    expect(m).toMatchObject({ ok: false, headers: [['allow', 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS, TRACE']] });
    expect(!m.ok && m.error.status).toBe(405);
    const many = Array.from({ length: MAX_HEADER_LINES }, (_, i): [string, string] => [`x-${i}`, '1']);
    expect(checkFraming('GET', many).ok).toBe(true);
    const over = checkFraming('GET', h(...many));
    expect(!over.ok && over.error.code).toBe('headers_too_large');
  });
});

describe('withoutParam (query injection)', () => {
  it.each([
    ['', ''],
    ['a=1&&b=2', 'a=1&&b=2'],
    ['k=1', ''],
    ['a=1&K=2', 'a=1'],
    ['%4b=1&a=%6B', 'a=%6B'],
    ['k+=1&k%20=2', 'k+=1&k%20=2'],
    ['a=1;b=2', 'a=1;b=2'],
    ['a=1;k=2;b=3', 'a=1;b=3'],
    ['k;k=2', ''],
  ])('%j -> %j', (q, out) => {
    expect(withoutParam(q, 'k')).toBe(out);
  });
});
