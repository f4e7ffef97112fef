import { describe, expect, it } from 'vitest';
import { cents, formatCents } from '../../core/money.js';
import { newId, randomString, sixDigitCode } from '../../core/ids.js';
import { decryptSecret, encryptSecret, sha256Hex } from '../../core/crypto.js';
import { bearerToken, isApiKeyFormat, mintApiKey, mintSessionToken } from '../../core/key-format.js';
import { formatScopes, parseScopes } from '../../core/scopes.js';
import { loadConfig } from '../../core/config.js';
import { utcDay } from '../../core/clock.js';
import { WindowLimiter } from '../../control/lib/rate-limit.js';
import { randomBytes } from 'node:crypto';

describe('money', () => {
  it.each([0, 1, -5, 9_007_199_254_740_991])('accepts integer %d', (n) => expect(cents(n)).toBe(n));
  it.each([0.5, Number.NaN, Infinity, 2 ** 53])('refuses %d', (n) => expect(() => cents(n)).toThrow(RangeError));
  it.each([
    [0, '$0.00'],
    [5, '$0.05'],
    [1234, '$12.34'],
    [-250, '-$2.50'],
  ])('formats %d as %s', (c, s) => expect(formatCents(c)).toBe(s));
});

describe('ids and secrets', () => {
  it('makes prefixed ids that sort by time', () => {
    const a = newId('org', 1_000_000);
    const b = newId('org', 2_000_000);
    expect(a).toMatch(/^org_[0-9a-z]{24}$/);
    expect([b, a].sort()).toEqual([a, b]);
  });
  it('draws every character of ids and keys evenly from the alphabet, across many refills of the byte pool', () => {
    const counts = new Map<string, number>();
    const seen = new Set<string>();
    const n = 20_000; // 20,000 x 24 chars: over a hundred 4 KiB pool refills
    for (let i = 0; i < n; i++) {
      const s = randomString(24);
      expect(s).toMatch(/^[0-9A-Za-z]{24}$/);
      seen.add(s);
      for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    }
    expect(seen.size).toBe(n);
    expect(counts.size).toBe(62);
    const expected = (n * 24) / 62;
    for (const c of counts.values()) expect(Math.abs(c - expected) / expected).toBeLessThan(0.1);
  });
  it('mints keys of the spec format, hashed with sha256', () => {
    const k = mintApiKey();
    expect(k.plaintext).toMatch(/^svc_live_[0-9A-Za-z]{24}$/);
    expect(isApiKeyFormat(k.plaintext)).toBe(true);
    expect(k.hash).toBe(sha256Hex(k.plaintext));
    expect(mintSessionToken().plaintext).toMatch(/^sess_/);
  });
  it.each(['svc_live_short', 'svc_test_' + 'a'.repeat(24), 'svc_live_' + 'a'.repeat(23) + '!'])(
    'rejects %s as a key',
    (s) => expect(isApiKeyFormat(s)).toBe(false),
  );
  it('codes are 6 digits', () => {
    for (let i = 0; i < 100; i++) expect(sixDigitCode()).toMatch(/^\d{6}$/);
  });
  it('round-trips AES-256-GCM and detects tampering', () => {
    const key = randomBytes(32);
    const enc = encryptSecret(key, 'upstream-secret');
    expect(enc).not.toContain('upstream-secret');
    expect(decryptSecret(key, enc)).toBe('upstream-secret');
    const raw = Buffer.from(enc.slice(3), 'base64');
    raw[raw.length - 1]! ^= 1;
    expect(() => decryptSecret(key, 'v1:' + raw.toString('base64'))).toThrow();
  });
  it.each([
    ['Bearer abc', 'abc'],
    ['bearer  abc ', 'abc'],
    ['Basic abc', undefined],
    [undefined, undefined],
  ])('parses Authorization %s', (h, t) => expect(bearerToken(h)).toBe(t));
});

describe('scopes, config, time, limits', () => {
  it('normalises scope order and drops unknown scopes', () => {
    expect(formatScopes(['provider:write', 'catalog:read'])).toBe('catalog:read provider:write');
    expect(parseScopes('catalog:read bogus proxy:call')).toEqual(['catalog:read', 'proxy:call']);
  });
  it('has safe defaults and lists every bad variable at once', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      env: 'development',
      host: '127.0.0.1',
      ports: { control: 4000, gateway: 4001, mcp: 4002 },
    });
    expect(() => loadConfig({ SVC_GATEWAY_PORT: '-1', SVC_SECRET_KEY: 'abc' })).toThrow(
      /SVC_GATEWAY_PORT[\s\S]*SVC_SECRET_KEY/,
    );
    expect(() => loadConfig({ SVC_ENV: 'production', SVC_CLOCK_OFFSET_FILE: '/tmp/x' })).toThrow(
      /SVC_CLOCK_OFFSET_FILE/,
    );
  });
  it('counts UTC days', () => {
    expect(utcDay(Date.UTC(2026, 10, 22, 23, 59))).toBe(utcDay(Date.UTC(2026, 10, 22, 0, 0)));
    expect(utcDay(Date.UTC(2026, 10, 23))).toBe(utcDay(Date.UTC(2026, 10, 22)) + 1);
  });
  it('limits a window and says when to retry', () => {
    const l = new WindowLimiter(2, 60_000);
    expect([l.take('a', 0), l.take('a', 1), l.take('a', 2)]).toEqual([0, 0, 60]);
    expect(l.take('b', 2)).toBe(0);
    expect(l.take('a', 60_001)).toBe(0);
  });
});
