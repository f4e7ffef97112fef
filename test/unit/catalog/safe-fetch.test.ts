import { describe, expect, it } from 'vitest';
import { assertFetchableUrl, isNonPublicAddress } from '../../../control/catalog/safe-fetch.js';

describe('isNonPublicAddress', () => {
  it.each([
    ['127.0.0.1', true],
    ['10.0.0.8', true],
    ['172.16.5.4', true],
    ['172.32.0.1', false],
    ['192.168.1.1', true],
    ['169.254.169.254', true],
    ['100.64.0.1', true],
    ['0.0.0.0', true],
    ['224.0.0.1', true],
    ['8.8.8.8', false],
    ['::1', true],
    ['::', true],
    ['fe80::1', true],
    ['fd00::1', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:8.8.8.8', false],
    ['2606:4700::1111', false],
    ['not-an-ip', true],
  ])('%s -> %s', (ip, expected) => {
    expect(isNonPublicAddress(ip)).toBe(expected);
  });
});

describe('assertFetchableUrl', () => {
  it.each(['file:///etc/passwd', 'gopher://x', 'ftp://example.com/a', 'not a url', 'http://user:pw@example.com/'])(
    'refuses %s',
    (u) => {
      expect(() => assertFetchableUrl(u, false)).toThrow(/./);
    },
  );
  it('allows loopback in development only', () => {
    expect(assertFetchableUrl('http://127.0.0.1:4010/x', false).port).toBe('4010');
    expect(() => assertFetchableUrl('http://127.0.0.1:4010/x', true)).toThrow(/loopback|private/);
    expect(() => assertFetchableUrl('http://svc.localhost/x', true)).toThrow();
  });
});
