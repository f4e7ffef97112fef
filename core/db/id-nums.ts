/**
 * The `id_nums` dictionary (0022_narrow_usage): the small integers the narrow usage row stores instead of text ids.
 * A num is assigned the first time a call names an id and never changes (the table is append-only), so a reader
 * turns a text id into its num with one indexed lookup (`numOf`) and a writer may cache nums forever once their
 * transaction committed. The gateway's writers keep their own caches (gateway/settle-writer.ts, gateway/pg/);
 * this is the kysely form for services, tools and tests, the same on both stores.
 */
import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { Database } from './database.js';

type Q = Kysely<Database> | Transaction<Database>;

/** `(SELECT num FROM id_nums WHERE id = $id)`: NULL (matches nothing) when no call ever named the id. */
export function numOf(id: string): RawBuilder<number> {
  return sql<number>`(SELECT num FROM id_nums WHERE id = ${id})`;
}

/** The nums of `ids`, assigning the missing ones (idempotent under concurrent writers on either store). */
export async function numsFor(db: Q, ids: readonly string[]): Promise<Map<string, number>> {
  const unique = [...new Set(ids)];
  const out = new Map<string, number>();
  if (unique.length === 0) return out;
  await db
    .insertInto('id_nums')
    .values(unique.map((id) => ({ id })))
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
  const rows = await db.selectFrom('id_nums').select(['id', 'num']).where('id', 'in', unique).execute();
  for (const r of rows) out.set(r.id, Number(r.num));
  return out;
}

/** A usage row as callers think of it (text ids): what `insertUsageCalls` turns into the narrow row. */
export interface UsageCallInput {
  request_id: string;
  org_id: string;
  key_id: string;
  api_id: string;
  endpoint_id: string;
  provider_org_id: string;
  method: string;
  status: number;
  latency_ms: number;
  price_cents: number;
  charged_cents: number;
  error_code: string | null;
  created_at: number;
}

/** Appends usage rows outside the gateway (imports, tools, tests); the gateway's writers do the same per batch. */
export async function insertUsageCalls(db: Q, rows: readonly UsageCallInput[]): Promise<void> {
  if (rows.length === 0) return;
  const nums = await numsFor(
    db,
    rows.flatMap((r) => [r.org_id, r.key_id, r.api_id, r.endpoint_id, r.provider_org_id]),
  );
  const n = (id: string) => nums.get(id)!;
  await db
    .insertInto('usage_calls')
    .values(
      rows.map((r) => ({
        request_id: r.request_id,
        org_num: n(r.org_id),
        key_num: n(r.key_id),
        api_num: n(r.api_id),
        endpoint_num: n(r.endpoint_id),
        provider_num: n(r.provider_org_id),
        method: r.method,
        status: r.status,
        latency_ms: r.latency_ms,
        price_cents: r.price_cents,
        charged_cents: r.charged_cents,
        error_code: r.error_code,
        created_at: r.created_at,
      })),
    )
    .execute();
}
