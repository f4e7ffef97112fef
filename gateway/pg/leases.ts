/**
 * Credit and cap leases on PostgreSQL. The in-memory side is the SQLite manager's (LeaseBook): a call that its
 * local slice covers reserves synchronously with no round trip. An acquisition is one pipelined transaction:
 *   1. lock the org row (`balances … FOR UPDATE`): the one lock every lease change of the org takes first;
 *   2. fold this holder's current slice of the key (its unfolded spend into the shared rows, fold.ts);
 *   3. one statement that reads the three headrooms (org credit − reserved; the key's budget and daily cap minus
 *      spent and every open slice), checks this holder is live (`FOR SHARE`: fencing against the reaper), sizes
 *      the slice and reserves it (extend the current lease or insert a new one); RETURNING what it decided.
 * Statement 3 takes its snapshot after statement 1 has the org lock, so no other acquisition, fold or release of
 * the org can interleave; settles can, but they move `spent` and `unfolded` together and change no headroom.
 * The slice: clamp(headroom / (4 × live holders fleet-wide), need, SVC_GATEWAY_LEASE_MAX_CENTS), so a small
 * balance is not locked up in one node, and as credit runs low each holder takes exactly what its call needs.
 * Acquisitions of one (key, day) in this process are serialized (the second waits and then reads memory).
 */
import { newId } from '../../core/ids.js';
import type { KeyRecord } from '../cache/key-cache.js';
import { INF, LeaseBook, type CapCode, type Lease, type ReserveOutcome } from '../leases.js';
import { HolderReapedError } from '../settle-writer.js';
import type { LeaseStore, PeekOutcome } from '../store.js';
import { sql, type Pg } from './connect.js';
import { foldAndRelease, foldLeases, lockOrgs, shrinkLeases } from './fold.js';

export interface PgLeaseOptions {
  /** Live holders fleet-wide (cached by the worker, refreshed every few seconds). */
  liveHolders: () => number;
  maxChunkCents: number;
  idleMs: number;
}

interface AcquireRow {
  live: number;
  avail: number;
  head_key: number;
  head_day: number;
  chunk: number;
  extended: string | null;
  inserted: string | null;
  others_open: number;
}

export class PgLeaseManager implements LeaseStore {
  readonly #book = new LeaseBook();
  /** Acquisitions in flight by `${keyId}:${day}`: a second call waits for the first rather than racing it. */
  readonly #acquiring = new Map<string, Promise<unknown>>();
  acquisitions = 0;

  constructor(
    private readonly db: Pg,
    readonly holderId: string,
    private readonly opts: PgLeaseOptions,
  ) {}

  reserve(key: KeyRecord, day: number, price: number, now: number): ReserveOutcome | Promise<ReserveOutcome> {
    const lease = this.#book.take(key.keyId, day, price, now);
    if (lease) return { ok: true, lease };
    const k = `${key.keyId}:${day}`;
    const busy = this.#acquiring.get(k);
    if (busy) return busy.then(() => this.reserve(key, day, price, now));
    const p = this.#acquire(key, day, price, now);
    this.#acquiring.set(k, p);
    const done = () => {
      if (this.#acquiring.get(k) === p) this.#acquiring.delete(k);
    };
    p.then(done, done);
    return p;
  }

  committed(leaseId: string, cents: number): void {
    this.#book.committed(leaseId, cents);
  }

  /** A settle whose commit outcome was unknown turned out to have committed (its call already failed). */
  committedLate(leaseId: string, cents: number): void {
    const l = this.#book.byId.get(leaseId);
    if (l) l.spent += cents;
  }

  cancel(lease: Lease, cents: number): void {
    lease.inflight -= cents;
  }

  get size(): number {
    return this.#book.byId.size;
  }

  async #acquire(key: KeyRecord, day: number, price: number, now: number): Promise<ReserveOutcome> {
    const cur = this.#book.current(key.keyId, day);
    const localFree = LeaseBook.free(cur);
    const need = price - localFree;
    const exp = now + this.opts.idleMs;
    const newLeaseId = newId('lease', now);
    const h = this.holderId;
    const holders = Math.max(1, this.opts.liveHolders());
    const [, , , rows] = await this.db.pipeline([
      lockOrgs([key.orgId]),
      ...foldLeases({ ids: cur ? [cur.id] : [] }, now),
      sql`
      WITH live AS (SELECT count(*)::int AS n FROM
                      (SELECT 1 FROM gateway_instances WHERE id = ${h} AND stopped_at IS NULL FOR SHARE) x),
      k AS (SELECT budget_cents, daily_cap_cents, spent_cents FROM api_keys WHERE id = ${key.keyId}),
      o AS (SELECT COALESCE(sum(amount_cents - spent_cents + unfolded_cents), 0)::bigint AS open,
                   COALESCE(sum(amount_cents - spent_cents + unfolded_cents) FILTER (WHERE day = ${day}), 0)::bigint AS open_day
            FROM balance_leases WHERE key_id = ${key.keyId} AND released_at IS NULL),
      hr AS (SELECT COALESCE((SELECT credit_cents - reserved_cents FROM balances WHERE org_id = ${key.orgId}), 0)::bigint AS avail,
               CASE WHEN k.budget_cents IS NULL THEN ${INF}::bigint ELSE k.budget_cents - k.spent_cents - o.open END AS head_key,
               CASE WHEN k.daily_cap_cents IS NULL THEN ${INF}::bigint ELSE k.daily_cap_cents
                 - COALESCE((SELECT spent_cents FROM key_daily_spend WHERE key_id = ${key.keyId} AND day = ${day}), 0)
                 - o.open_day END AS head_day
             FROM k, o),
      m AS (SELECT avail, head_key, head_day, LEAST(avail, head_key, head_day) AS head FROM hr),
      c AS (SELECT avail, head_key, head_day,
              CASE WHEN (SELECT n FROM live) = 1 AND head >= ${need}::bigint
                THEN LEAST(head, GREATEST(${need}::bigint, LEAST(${this.opts.maxChunkCents}::bigint, head / ${4 * holders})))
                ELSE 0 END AS chunk
            FROM m),
      r AS (UPDATE balances b SET reserved_cents = b.reserved_cents + c.chunk, updated_at = ${now}
            FROM c WHERE b.org_id = ${key.orgId} AND c.chunk > 0 RETURNING 1),
      ext AS (UPDATE balance_leases l SET amount_cents = l.amount_cents + c.chunk, expires_at = ${exp}
              FROM c WHERE l.id = ${cur?.id ?? null}::text AND l.holder_id = ${h} AND l.released_at IS NULL AND c.chunk > 0
              RETURNING l.id),
      ins AS (INSERT INTO balance_leases (id, holder_id, org_id, key_id, day, amount_cents, spent_cents, created_at, expires_at)
              SELECT ${newLeaseId}, ${h}, ${key.orgId}, ${key.keyId}, ${day}, c.chunk, 0, ${now}, ${exp}
              FROM c WHERE c.chunk > 0 AND NOT EXISTS (SELECT 1 FROM ext) RETURNING id)
      SELECT (SELECT n FROM live) AS live, c.avail, c.head_key, c.head_day, c.chunk,
             (SELECT id FROM ext) AS extended, (SELECT id FROM ins) AS inserted,
             (SELECT COALESCE(sum(amount_cents - spent_cents), 0)::bigint FROM balance_leases
               WHERE org_id = ${key.orgId} AND holder_id <> ${h} AND released_at IS NULL) AS others_open
      FROM c`,
    ]);
    const row = (rows as unknown as AcquireRow[])[0];
    if (row && row.live !== 1) throw new HolderReapedError('this gateway holder is stopped; it takes no new lease');
    if (!row || row.chunk <= 0) {
      const headKey = row?.head_key ?? 0;
      const headDay = row?.head_day ?? 0;
      const headroom = row ? Math.min(row.avail, headKey, headDay) : 0;
      const code: CapCode =
        headKey < need ? 'budget_exceeded' : headDay < need ? 'daily_cap_exceeded' : 'insufficient_credits';
      return { ok: false, code, headroom: Math.max(0, headroom + localFree), othersHold: (row?.others_open ?? 0) > 0 };
    }
    this.acquisitions++;
    let lease = cur;
    if (lease && row.extended === lease.id) lease.amount += row.chunk;
    else {
      // The current slice was released meanwhile (reaped while stalled, or returned): start a new one.
      if (lease) this.#book.forget(lease);
      lease = {
        id: newLeaseId,
        orgId: key.orgId,
        keyId: key.keyId,
        day,
        amount: row.chunk,
        spent: 0,
        inflight: 0,
        lastUsed: now,
      };
      this.#book.add(lease);
    }
    lease.inflight += price;
    lease.lastUsed = now;
    return { ok: true, lease };
  }

  async peek(key: KeyRecord, day: number, price: number): Promise<PeekOutcome> {
    const localFree = LeaseBook.free(this.#book.current(key.keyId, day));
    const [row] = await this.db.rows<{ avail: number; head_key: number; head_day: number }>(sql`
      WITH k AS (SELECT budget_cents, daily_cap_cents, spent_cents FROM api_keys WHERE id = ${key.keyId}),
      o AS (SELECT COALESCE(sum(amount_cents - spent_cents + unfolded_cents), 0)::bigint AS open,
                   COALESCE(sum(amount_cents - spent_cents + unfolded_cents) FILTER (WHERE day = ${day}), 0)::bigint AS open_day
            FROM balance_leases WHERE key_id = ${key.keyId} AND released_at IS NULL)
      SELECT COALESCE((SELECT credit_cents - reserved_cents FROM balances WHERE org_id = ${key.orgId}), 0)::bigint AS avail,
        CASE WHEN k.budget_cents IS NULL THEN ${INF}::bigint ELSE k.budget_cents - k.spent_cents - o.open END AS head_key,
        CASE WHEN k.daily_cap_cents IS NULL THEN ${INF}::bigint ELSE k.daily_cap_cents
          - COALESCE((SELECT spent_cents FROM key_daily_spend WHERE key_id = ${key.keyId} AND day = ${day}), 0)
          - o.open_day END AS head_day
      FROM k, o`);
    const avail = row?.avail ?? 0;
    const headKey = row?.head_key ?? 0;
    const headDay = row?.head_day ?? 0;
    const headroom = Math.min(avail, headKey, headDay) + localFree;
    if (headroom >= price) return { ok: true, headroom };
    const code: CapCode =
      headKey + localFree < price
        ? 'budget_exceeded'
        : headDay + localFree < price
          ? 'daily_cap_exceeded'
          : 'insufficient_credits';
    return { ok: false, code, headroom };
  }

  /** Returns the unused part of matching slices (pressure from another holder, or a control-plane change). */
  async shrinkWhere(pred: (l: Lease) => boolean, now: number): Promise<void> {
    const hit = this.#book.unused(pred);
    if (hit.length === 0) return;
    const full = hit.filter((l) => l.spent + l.inflight === 0);
    const part = hit.filter((l) => l.spent + l.inflight > 0);
    await this.db.transaction(async (run) => {
      await run(lockOrgs(hit.map((l) => l.orgId)));
      if (full.length) await foldAndRelease(run, { ids: full.map((l) => l.id) }, now);
      if (part.length)
        await shrinkLeases(
          run,
          this.holderId,
          part.map((l) => l.id),
          part.map((l) => l.amount - l.spent - l.inflight),
          now,
        );
    });
    for (const l of full) this.#book.forget(l);
    for (const l of part) l.amount = l.spent + l.inflight;
  }

  async releaseIdle(now: number, today: number): Promise<void> {
    await this.#release(this.#book.idle(now, today, this.opts.idleMs), now);
  }

  async releaseAll(now: number): Promise<void> {
    await this.#release(this.#book.all(), now);
  }

  /**
   * The housekeeping fold: moves this holder's unfolded spend into the shared rows, so balances, key spend and
   * daily spend as the control plane reads them lag the ledger by at most one housekeeping interval.
   */
  async foldOpen(now: number): Promise<number> {
    const orgs = [...new Set(this.#book.all().map((l) => l.orgId))];
    if (orgs.length === 0) return 0;
    const [, , r] = await this.db.pipeline([lockOrgs(orgs), ...foldLeases({ holderId: this.holderId }, now)]);
    return (r as { folded: number }[])[0]?.folded ?? 0;
  }

  async #release(leases: Lease[], now: number): Promise<void> {
    if (leases.length === 0) return;
    await this.db.transaction(async (run) => {
      await run(lockOrgs(leases.map((l) => l.orgId)));
      // A lease already released by a reaper (we were presumed dead) is skipped: never returned twice.
      await foldAndRelease(run, { ids: leases.map((l) => l.id) }, now);
    });
    for (const l of leases) this.#book.forget(l);
  }
}
