/**
 * The gateway's own parameter encoders and named statements against a real PostgreSQL 15: array literals the
 * server reads back element for element (quotes, backslashes, commas, braces, the string "NULL", empty strings,
 * nulls), and a fixed-text statement prepared once per connection keeps answering with new values.
 */
import { describe, expect, it } from 'vitest';
import { intArray, sql, textArray } from '../../../../gateway/pg/connect.js';
import { pgUnavailable, useGatewayPg } from './pg-kit.js';

const why = pgUnavailable();
const env = useGatewayPg();

describe.skipIf(why !== null)('gateway/pg encoders', () => {
  it('textArray and intArray round-trip through text[] and bigint[] exactly', async () => {
    const texts = ['req_01abc', 'a"b', 'back\\slash', 'x,y', '{brace}', 'NULL', '', ' spaced ', 'é→✓', null, '\\"'];
    const ints = [0, -1, 42, 2 ** 53 - 1, -(2 ** 40)];
    const [row] = await env
      .admin()
      .rows<{ t: (string | null)[]; i: number[] }>(
        sql`SELECT ${textArray(texts)}::text[] AS t, ${intArray(ints)}::bigint[]::text[]::bigint[] AS i`,
      );
    expect(row!.t).toEqual(texts);
    expect((row!.i as unknown[]).map(Number)).toEqual(ints);
    const [empty] = await env.admin().rows<{ n: number }>(sql`SELECT cardinality(${textArray([])}::text[]) AS n`);
    expect(empty!.n).toBe(0);
  });

  it('a fixed-text statement is named once per call site and answers every later call with its own values', async () => {
    const q = (v: number) => sql`SELECT ${v}::int + 1 AS n`;
    expect(q(1).name).toBeDefined();
    expect(q(1).name).toBe(q(2).name);
    expect(sql`SELECT ${sql`1`} AS n`.name).toBeUndefined();
    // One connection (a transaction): five executions, one statement prepared on the server under that name.
    const { got, prepared } = await env.admin().transaction(async (run) => {
      const got: number[] = [];
      for (let v = 0; v < 5; v++) got.push((await run<{ n: number }>(q(v)))[0]!.n);
      const [p] = await run<{ n: number }>(
        sql`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name = ${q(0).name!}`,
      );
      return { got, prepared: p!.n };
    });
    expect(got).toEqual([1, 2, 3, 4, 5]);
    expect(prepared).toBe(1);
  });
});
