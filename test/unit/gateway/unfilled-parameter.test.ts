/**
 * The gateway refuses a path whose `{param}` segment still holds its placeholder (issue 24: MCP's call_api
 * forwarded `/cities/{city}` when `input` lacked `city`, and the call was charged). The one place of that rule:
 * gateway/steps/checks.ts, before any reservation, for REST callers and MCP alike.
 */
import { describe, expect, it } from 'vitest';
import { unfilledParameter } from '../../../gateway/steps/checks.js';
import type { EndpointRec } from '../../../gateway/cache/listing-cache.js';

const endpoint = (path: string): EndpointRec => {
  const segments = path
    .split('/')
    .slice(1)
    .map((s) => (s.startsWith('{') ? null : s));
  return {
    id: path,
    method: 'GET',
    segments,
    literals: segments.filter((s) => s !== null).length,
    priceCents: 1,
    tiers: [],
  };
};

describe('unfilledParameter', () => {
  it('names a placeholder left in a parameter segment, sent as is or percent-encoded', () => {
    expect(unfilledParameter(endpoint('/cities/{city}'), '/cities/{city}')).toBe('{city}');
    expect(unfilledParameter(endpoint('/cities/{city}'), '/cities/%7Bcity%7D')).toBe('{city}');
    expect(unfilledParameter(endpoint('/a/{x}/b/{y}'), '/a/1/b/%7by%7d')).toBe('{y}');
  });

  it('passes real values, including braces that are not a whole placeholder', () => {
    expect(unfilledParameter(endpoint('/cities/{city}'), '/cities/lisbon')).toBeNull();
    expect(unfilledParameter(endpoint('/q/{expr}'), '/q/a%7Bb%7D')).toBeNull();
    expect(unfilledParameter(endpoint('/static/{x}'), '/static/%E0%A4%A')).toBeNull(); // malformed: escapingParameter's
  });
});
