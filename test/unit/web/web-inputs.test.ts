import { describe, expect, it } from 'vitest';
import { safeNext } from '../../../control/web/web-session.js';
import { centsToDollarsInput, dollarsToCents } from '../../../control/web/form.js';
import { csvCell } from '../../../control/web/pages/usage.js';

describe('safeNext keeps post-login redirects on this site', () => {
  it.each([
    ['/dashboard/keys?x=1#k', '/dashboard/keys?x=1#k'],
    ['/apis/a%20b', '/apis/a%20b'],
    [undefined, '/dashboard'],
    ['', '/dashboard'],
    ['dashboard', '/dashboard'],
    ['//evil.example/x', '/dashboard'],
    ['/\\evil.example', '/dashboard'],
    ['https://evil.example/', '/dashboard'],
    ['javascript:alert(1)', '/dashboard'],
    ['/ok\r\nSet-Cookie: x=1', '/dashboard'],
    ['/' + 'a'.repeat(3000), '/dashboard'],
    ['/..//evil.example', '/dashboard'],
    ['/./..//x', '/dashboard'],
    ['/%2e%2e//x', '/dashboard'],
    ['/a/../..//evil.example/p', '/dashboard'],
    ['/a/./b/../c', '/a/c'],
  ])('%j -> %j', (input, expected) => expect(safeNext(input)).toBe(expected));
});

describe('dollar inputs become integer cents without floats', () => {
  it.each([
    ['5', 500],
    ['5.5', 550],
    ['5.05', 505],
    ['$0.07', 7],
    [' 1000 ', 100_000],
    ['', null],
  ])('%j -> %j', (input, cents) => expect(dollarsToCents('amount', input)).toBe(cents));

  it.each(['5.555', '-1', '1e3', 'abc', '0x10', '5,00', '99999999'])('refuses %j with validation_failed', (input) =>
    expect(() => dollarsToCents('amount', input)).toThrow(expect.objectContaining({ code: 'validation_failed' })),
  );

  it('shows cents back as a dollars input', () => {
    expect([centsToDollarsInput(505), centsToDollarsInput(0), centsToDollarsInput(null)]).toEqual(['5.05', '0.00', '']);
  });
});

describe('usage CSV cells', () => {
  it.each([
    ['plain', 'plain'],
    [42, '42'],
    [null, ''],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['=HYPERLINK("x")', `"'=HYPERLINK(""x"")"`],
    ['+1', `"'+1"`],
    ['@sum', `"'@sum"`],
  ])('%j -> %j', (v, out) => expect(csvCell(v)).toBe(out));
});
