import { describe, expect, it } from 'vitest';
import { diversity, scoreListing, wilsonLower } from '../../../control/market/leaderboards.service.js';
import { isIncrease } from '../../../control/pricing/pricing.service.js';
import { ftsQuery } from '../../../control/catalog/search.service.js';

const org = (calls: number, gross: number, ok = calls) => ({
  api_id: 'a',
  org_id: Math.random().toString(36),
  calls,
  ok,
  gross,
  calls7: calls,
  prev7: 0,
});

describe('leaderboard scoring', () => {
  it('diversity reaches full credit at five orgs', () => {
    expect([1, 3, 5, 9].map(diversity)).toEqual([0.2, 0.6, 1, 1]);
  });
  it('wilson lower bound rewards sample size', () => {
    expect(wilsonLower(10, 10)).toBeLessThan(wilsonLower(100, 100));
    expect(wilsonLower(0, 0)).toBe(0);
  });
  it('square-root per org: three orgs spending 100x cannot beat twenty small consumers by a wide margin', () => {
    const now = Date.now();
    const sybil = scoreListing(
      { orgs: [org(1000, 10_000), org(1000, 10_000), org(1000, 10_000)], verifyOk: 1, refundRate: 0, publishedAt: now },
      now,
    );
    const crowd = scoreListing(
      { orgs: Array.from({ length: 20 }, () => org(10, 100)), verifyOk: 1, refundRate: 0, publishedAt: now },
      now,
    );
    expect(crowd.top_grossing!).toBeGreaterThan(sybil.top_grossing!);
  });
  it('refunds and failed verification discount the score; single-org listings are not eligible', () => {
    const now = Date.now();
    const orgs = Array.from({ length: 6 }, () => org(30, 300));
    const base = scoreListing({ orgs, verifyOk: 1, refundRate: 0, publishedAt: null }, now);
    const refunded = scoreListing({ orgs, verifyOk: 1, refundRate: 0.5, publishedAt: null }, now);
    const failing = scoreListing({ orgs, verifyOk: 0, refundRate: 0, publishedAt: null }, now);
    expect(refunded.top_grossing!).toBeCloseTo(base.top_grossing! / 2);
    expect(failing.most_used!).toBeCloseTo(base.most_used! / 2);
    expect(scoreListing({ orgs: [org(1000, 1000)], verifyOk: 1, refundRate: 0, publishedAt: now }, now)).toEqual({});
  });
});

describe('trending, new_rising and best_value', () => {
  const now = Date.now();
  const o = (calls7: number, prev7: number, gross = 0) => ({
    api_id: 'a',
    org_id: Math.random().toString(36),
    calls: calls7 + prev7,
    ok: calls7 + prev7,
    gross,
    calls7,
    prev7,
  });
  it('trending rewards growth across orgs and ignores shrinking listings', () => {
    const growing = scoreListing(
      { orgs: [o(20, 2), o(20, 2), o(20, 2), o(20, 2)], verifyOk: 1, refundRate: 0, publishedAt: null },
      now,
    );
    const shrinking = scoreListing(
      { orgs: [o(2, 20), o(2, 20), o(2, 20), o(2, 20)], verifyOk: 1, refundRate: 0, publishedAt: null },
      now,
    );
    expect(growing.trending!).toBeGreaterThan(0);
    expect(shrinking.trending).toBeUndefined();
  });
  it('new_rising only lists listings published in the last 30 days', () => {
    const orgs = [o(10, 0), o(10, 0), o(10, 0)];
    expect(
      scoreListing({ orgs, verifyOk: 1, refundRate: 0, publishedAt: now - 86_400_000 }, now).new_rising,
    ).toBeGreaterThan(0);
    expect(
      scoreListing({ orgs, verifyOk: 1, refundRate: 0, publishedAt: now - 40 * 86_400_000 }, now).new_rising,
    ).toBeUndefined();
  });
  it('best_value prefers the cheaper of two equally used, equally reliable listings', () => {
    const cheap = scoreListing(
      { orgs: [o(10, 0, 10), o(10, 0, 10), o(10, 0, 10)], verifyOk: 1, refundRate: 0, publishedAt: null },
      now,
    );
    const dear = scoreListing(
      { orgs: [o(10, 0, 500), o(10, 0, 500), o(10, 0, 500)], verifyOk: 1, refundRate: 0, publishedAt: null },
      now,
    );
    expect(cheap.best_value!).toBeGreaterThan(dear.best_value!);
  });
});

describe('isIncrease', () => {
  it.each([
    [10, [], 12, [], true],
    [10, [], 8, [], false],
    [10, [{ min_calls: 100, percent_off: 50 }], 10, [], true],
    [10, [], 10, [{ min_calls: 100, percent_off: 50 }], false],
    [10, [{ min_calls: 100, percent_off: 50 }], 10, [{ min_calls: 200, percent_off: 50 }], true],
    [10, [{ min_calls: 100, percent_off: 50 }], 9, [{ min_calls: 100, percent_off: 50 }], false],
  ])('%i %j -> %i %j is an increase: %s', (op, ot, np, nt, expected) => {
    expect(isIncrease(op, ot, np, nt)).toBe(expected);
  });
});

describe('ftsQuery', () => {
  it.each([
    ['weather api', '"weather"* OR "api"*'],
    ['"*) OR (', '"or"*'],
    ['"*)(', null],
    ['Café  NEAR/3', '"café"* OR "near"* OR "3"*'],
  ])('%s -> %s', (q, expected) => {
    expect(ftsQuery(q)).toBe(expected);
  });
});
