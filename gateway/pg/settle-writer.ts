/**
 * The group commit on PostgreSQL. Settles queue in memory; a batch is written when the oldest queued settle is
 * `flushMs` old (default 5 ms) or `maxBatch` are queued, one batch in flight at a time (the next one collects
 * meanwhile). Each batch is ONE transaction sent in one flight (`pg`'s pipeline mode, connect.ts):
 *   1. fencing: this holder's row `FOR SHARE` (a reaped holder's batch divides by zero and rolls back);
 *   2. usage rows, one per call, in one `INSERT … SELECT FROM unnest(…)`;
 *   3. one `call_charge` ledger entry per key and one provider earning per (provider, API), both by unnest;
 *   4. this holder's own lease rows: `spent` and `unfolded` up by the batch's sums, each still open and within its
 *      amount (a lease that is not aborts the batch); nothing else: the shared rows (`balances`, `api_keys`,
 *      `key_daily_spend`) are folded later (fold.ts), so gateways never queue on one org's row per batch;
 *   5. completed Idempotency-Key records;
 *   6. the orgs' credit as the batch leaves it (credit − every open lease's unfolded spend), for
 *      `X-Svc-Balance-Cents`: exact for this node's view at its commit, an estimate across nodes.
 * Every caller's promise resolves after the COMMIT. When the connection drops with the COMMIT possibly sent, the
 * outcome is unknown: the calls fail (500, not charged as far as the client knows) and their request ids are
 * looked up once the database answers again (`onLateCommit` for those that did commit: charged, never seen).
 * `synchronous_commit` stays `on`: an answered call has a durable record.
 */
import { fastId } from '../fast-id.js';
import { splitPlatformFee } from '../../core/platform-fee.js';
import { HolderReapedError, type SettleRecord } from '../settle-writer.js';
import type { SettleStore } from '../store.js';
import { isConnectionLoss, sql, type Pg, type Q } from './connect.js';

export interface PgSettleWriterOptions {
  holderId: string;
  platformFeeBps: number;
  /** A batch is sent once its oldest settle is this old (ms). */
  flushMs?: number;
  /** …or once this many settles are queued. */
  maxBatch?: number;
  onCommitted?: (records: readonly SettleRecord[]) => void;
  /** Records of a batch whose outcome was unknown that turned out to be committed. */
  onLateCommit?: (records: readonly SettleRecord[]) => void;
  onError?: (e: unknown) => void;
}

/** The connection dropped while the batch's COMMIT may have been sent: it may or may not have committed. */
export class CommitOutcomeUnknownError extends Error {}

interface Waiter {
  rec: SettleRecord;
  resolve: (balanceCents: number) => void;
  reject: (e: unknown) => void;
}

/** SQLSTATE division_by_zero: how the batch's own guards (fencing, lease bounds) abort it in one flight. */
const GUARD = '22012';

export class PgSettleWriter implements SettleStore {
  #queue: Waiter[] = [];
  #timer: NodeJS.Timeout | null = null;
  #inFlight: Promise<void> | null = null;
  #unknown: SettleRecord[] = [];
  written = 0;
  batches = 0;
  readonly #flushMs: number;
  readonly #maxBatch: number;

  constructor(
    private readonly db: Pg,
    private readonly opts: PgSettleWriterOptions,
  ) {
    this.#flushMs = opts.flushMs ?? 5;
    this.#maxBatch = opts.maxBatch ?? 256;
  }

  get pending(): number {
    return this.#queue.length + (this.#inFlight ? 1 : 0);
  }

  settle(rec: SettleRecord): Promise<number> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ rec, resolve, reject });
      if (this.#inFlight) return; // sent when the batch in flight completes
      if (this.#queue.length >= this.#maxBatch) this.#kick();
      else this.#timer ??= setTimeout(() => this.#kick(), this.#flushMs);
    });
  }

  /** Writes what is queued now (and waits for it). `blocking` = shutdown: the same, nothing is refused here. */
  async flush(_blocking = false): Promise<void> {
    if (this.#inFlight) await this.#inFlight;
    if (this.#queue.length) {
      this.#kick();
      if (this.#inFlight) await this.#inFlight;
    }
  }

  #kick(): void {
    if (this.#timer) {
      clearTimeout(this.#timer);
      this.#timer = null;
    }
    if (this.#inFlight || this.#queue.length === 0) return;
    const batch = this.#queue.splice(0, this.#maxBatch);
    this.#inFlight = this.#run(batch).finally(() => {
      this.#inFlight = null;
      if (this.#queue.length === 0) return;
      // What queued during the commit has waited at least as long as it took: send it now.
      this.#kick();
    });
  }

  async #run(batch: Waiter[]): Promise<void> {
    const records = batch.map((w) => w.rec);
    try {
      if (this.#unknown.length) await this.#resolveUnknown();
      const balances = await this.#write(records);
      this.written += records.length;
      this.batches++;
      this.opts.onCommitted?.(records);
      for (const [i, w] of batch.entries()) w.resolve(balances[i]!);
    } catch (e) {
      const err = this.#classify(e, records);
      for (const w of batch) w.reject(err);
    }
  }

  #classify(e: unknown, records: SettleRecord[]): unknown {
    const code = (e as { code?: string }).code;
    if (code === GUARD && String((e as Error).message).includes('division by zero')) {
      // Which guard: the holder check runs first, so a stopped holder is the usual cause; a lease that was
      // released or is short also lands here. Both: nothing of the batch was written.
      return new HolderReapedError('this gateway holder was reaped (or its lease released); the batch rolled back');
    }
    if (isConnectionLoss(e)) {
      this.#unknown.push(...records);
      return new CommitOutcomeUnknownError('the database connection dropped during the commit; outcome unknown');
    }
    this.opts.onError?.(e);
    return e;
  }

  /** After an outcome-unknown batch: which of its calls did commit (looked up by request id). */
  async #resolveUnknown(): Promise<void> {
    const recs = this.#unknown;
    const ids = recs.map((r) => r.requestId);
    const rows = await this.db.rows<{ id: string }>(sql`SELECT id FROM usage_events WHERE id = ANY(${ids}::text[])`);
    this.#unknown = [];
    const found = new Set(rows.map((r) => r.id));
    const late = recs.filter((r) => found.has(r.requestId));
    if (late.length) this.opts.onLateCommit?.(late);
  }

  // Long: one PostgreSQL transaction that writes a batch of settled calls (usage, ledger, earnings, balances) in order;
  // its statements share the batch's rows.
  async #write(records: SettleRecord[]): Promise<number[]> {
    const now = records[records.length - 1]!.createdAt;
    const feeBps = this.opts.platformFeeBps;
    const batchId = fastId('bat', now);
    const charges = new Map<string, { orgId: string; cents: number; calls: number }>();
    const earnings = new Map<string, { providerOrgId: string; apiId: string; gross: number; fee: number }>();
    const leases = new Map<string, number>();
    const u = {
      id: [] as string[],
      org: [] as string[],
      key: [] as string[],
      api: [] as string[],
      endpoint: [] as string[],
      provider: [] as string[],
      method: [] as string[],
      status: [] as number[],
      latency: [] as number[],
      price: [] as number[],
      charged: [] as number[],
      error: [] as (string | null)[],
      created: [] as number[],
    };
    const idem: SettleRecord[] = [];
    for (const r of records) {
      u.id.push(r.requestId);
      u.org.push(r.orgId);
      u.key.push(r.keyId);
      u.api.push(r.apiId);
      u.endpoint.push(r.endpointId);
      u.provider.push(r.providerOrgId);
      u.method.push(r.method);
      u.status.push(r.status);
      u.latency.push(r.latencyMs);
      u.price.push(r.priceCents);
      u.charged.push(r.chargedCents);
      u.error.push(r.errorCode);
      u.created.push(r.createdAt);
      if (r.idempotency) idem.push(r);
      const c = r.chargedCents;
      if (c <= 0) continue;
      if (r.leaseId === null) throw new Error('the PostgreSQL store charges through leases only (leaseId required)');
      const ch = charges.get(r.keyId);
      if (ch) {
        ch.cents += c;
        ch.calls++;
      } else charges.set(r.keyId, { orgId: r.orgId, cents: c, calls: 1 });
      const fee = splitPlatformFee(c, feeBps).feeCents;
      const ek = `${r.providerOrgId}\u0000${r.apiId}`;
      const e = earnings.get(ek);
      if (e) {
        e.gross += c;
        e.fee += fee;
      } else earnings.set(ek, { providerOrgId: r.providerOrgId, apiId: r.apiId, gross: c, fee });
      leases.set(r.leaseId, (leases.get(r.leaseId) ?? 0) + c);
    }
    const ch = [...charges.entries()];
    const ea = [...earnings.values()];
    const le = [...leases.entries()];
    const orgs = [...new Set(records.map((r) => r.orgId))];
    const h = this.opts.holderId;
    const results = await this.db.pipeline(
      ((): Q[] => {
        const q = [
          sql`SELECT 1 / count(*)::int AS live FROM
              (SELECT 1 FROM gateway_instances WHERE id = ${h} AND stopped_at IS NULL FOR SHARE) x`,
          sql`INSERT INTO usage_events (id, org_id, key_id, api_id, endpoint_id, provider_org_id, method, status,
              latency_ms, price_cents, charged_cents, error_code, created_at)
            SELECT * FROM unnest(${u.id}::text[], ${u.org}::text[], ${u.key}::text[], ${u.api}::text[],
              ${u.endpoint}::text[], ${u.provider}::text[], ${u.method}::text[], ${u.status}::int[],
              ${u.latency}::bigint[], ${u.price}::bigint[], ${u.charged}::bigint[], ${u.error}::text[],
              ${u.created}::bigint[])`,
        ];
        if (ch.length) {
          q.push(sql`INSERT INTO ledger_entries (id, org_id, key_id, kind, status, amount_cents, reason, ref_type, ref_id,
              idempotency_key, created_at)
            SELECT * FROM unnest(${ch.map(() => fastId('txn', now))}::text[], ${ch.map(([, c]) => c.orgId)}::text[],
              ${ch.map(([k]) => k)}::text[], ${ch.map(() => 'call_charge')}::text[], ${ch.map(() => 'settled')}::text[],
              ${ch.map(([, c]) => -c.cents)}::bigint[], ${ch.map(([, c]) => `${c.calls} ${c.calls === 1 ? 'call' : 'calls'}`)}::text[],
              ${ch.map(() => 'usage_batch')}::text[], ${ch.map(() => batchId)}::text[],
              ${ch.map(([k]) => `calls:${batchId}:${k}`)}::text[], ${ch.map(() => now)}::bigint[])`);
          q.push(sql`INSERT INTO provider_earnings (id, provider_org_id, api_id, kind, gross_cents, fee_cents, net_cents,
              ref_id, idempotency_key, created_at)
            SELECT * FROM unnest(${ea.map(() => fastId('txn', now))}::text[], ${ea.map((e) => e.providerOrgId)}::text[],
              ${ea.map((e) => e.apiId)}::text[], ${ea.map(() => 'earning')}::text[], ${ea.map((e) => e.gross)}::bigint[],
              ${ea.map((e) => e.fee)}::bigint[], ${ea.map((e) => e.gross - e.fee)}::bigint[], ${ea.map(() => batchId)}::text[],
              ${ea.map((e) => `earn:${batchId}:${e.providerOrgId}:${e.apiId}`)}::text[], ${ea.map(() => now)}::bigint[])`);
          // Every lease of the batch must take its charge: a count short of the leases aborts the transaction.
          q.push(sql`WITH s AS (UPDATE balance_leases l SET spent_cents = l.spent_cents + v.c, unfolded_cents = l.unfolded_cents + v.c
                     FROM unnest(${le.map(([id]) => id)}::text[], ${le.map(([, c]) => c)}::bigint[]) AS v(id, c)
                     WHERE l.id = v.id AND l.holder_id = ${h} AND l.released_at IS NULL
                       AND l.spent_cents + v.c <= l.amount_cents
                     RETURNING 1)
                   SELECT 1 / (CASE WHEN count(*) = ${le.length} THEN 1 ELSE 0 END) AS ok FROM s`);
        }
        for (const r of idem) {
          const i = r.idempotency!;
          q.push(sql`UPDATE idempotency_records SET state = 'done', response_status = ${i.status},
                     response_headers_json = ${i.headersJson}, response_body = ${i.body}
                   WHERE org_id = ${i.orgId} AND idem_key = ${i.idemKey} AND request_id = ${r.requestId}`);
        }
        q.push(sql`SELECT b.org_id, (b.credit_cents - COALESCE((SELECT sum(l.unfolded_cents) FROM balance_leases l
                   WHERE l.org_id = b.org_id AND l.released_at IS NULL), 0))::bigint AS credit
                 FROM balances b WHERE b.org_id = ANY(${orgs}::text[])`);
        return q;
      })(),
    );
    const credit = new Map<string, number>();
    for (const r of results[results.length - 1] as { org_id: string; credit: number }[]) credit.set(r.org_id, r.credit);
    // Each caller learns its org's credit right after its own call: the final credit plus later calls' charges.
    const out = new Array<number>(records.length);
    for (let i = records.length - 1; i >= 0; i--) {
      const r = records[i]!;
      const v = credit.get(r.orgId) ?? 0;
      out[i] = v;
      credit.set(r.orgId, v + r.chargedCents);
    }
    return out;
  }
}
