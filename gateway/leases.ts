/**
 * Balance and cap leases: this process draws a slice of an org's available credit (credit - reserved) and of
 * the key's lifetime-budget and daily-cap headroom in one SQLite transaction, then reserves calls against it in
 * memory. Charges settle against the lease (settle-writer.ts); unused slices go back on idle, on pressure from
 * another process, on shutdown, or (for a dead holder) when any process reaps it. Invariants: gateway/README.md.
 */
import type Sqlite from 'better-sqlite3';
import { newId } from '../core/ids.js';
import type { KeyRecord } from './cache/key-cache.js';
import { holderLiveness } from './instances.js';
import { noWait, type NoWait } from './no-wait.js';
import { HolderReapedError } from './settle-writer.js';
import type { LeaseStore } from './store.js';

export interface Lease {
  id: string;
  orgId: string;
  keyId: string;
  day: number;
  /** Mirrors balance_leases.amount_cents. */
  amount: number;
  /** Mirrors balance_leases.spent_cents (committed charges only). */
  spent: number;
  /** Reserved by calls in flight or awaiting their settle commit. */
  inflight: number;
  lastUsed: number;
}

export type CapCode = 'insufficient_credits' | 'budget_exceeded' | 'daily_cap_exceeded';
export type ReserveOutcome =
  | { ok: true; lease: Lease }
  | { ok: false; code: CapCode; headroom: number; othersHold: boolean };

export const INF = Number.MAX_SAFE_INTEGER;

/**
 * The in-memory side of leases, the same for every store: this holder's slices by id and by (key, UTC day),
 * reservations of calls in flight, and which slices to return. Only the acquisitions and returns touch a database.
 */
export class LeaseBook {
  readonly byKeyDay = new Map<string, Lease>();
  readonly byId = new Map<string, Lease>();

  current(keyId: string, day: number): Lease | undefined {
    return this.byKeyDay.get(`${keyId}:${day}`);
  }

  /** Reserves `price` from the local slice when it covers it; undefined when the database must be asked. */
  take(keyId: string, day: number, price: number, now: number): Lease | undefined {
    const cur = this.byKeyDay.get(`${keyId}:${day}`);
    if (cur && cur.amount - cur.spent - cur.inflight >= price) {
      cur.inflight += price;
      cur.lastUsed = now;
      return cur;
    }
    return undefined;
  }

  /** The unreserved part of a slice (what a call can still take without the database). */
  static free(l: Lease | undefined): number {
    return l ? Math.max(0, l.amount - l.spent - l.inflight) : 0;
  }

  add(lease: Lease): void {
    this.byId.set(lease.id, lease);
    this.byKeyDay.set(`${lease.keyId}:${lease.day}`, lease);
  }

  forget(l: Lease): void {
    this.byId.delete(l.id);
    if (this.byKeyDay.get(`${l.keyId}:${l.day}`) === l) this.byKeyDay.delete(`${l.keyId}:${l.day}`);
  }

  committed(leaseId: string, cents: number): void {
    const l = this.byId.get(leaseId);
    if (!l) return;
    l.spent += cents;
    l.inflight -= cents;
  }

  /** Slices matching `pred` that still hold something unreserved. */
  unused(pred: (l: Lease) => boolean): Lease[] {
    return [...this.byId.values()].filter((l) => pred(l) && l.amount - l.spent - l.inflight > 0);
  }

  idle(now: number, today: number, idleMs: number): Lease[] {
    return [...this.byId.values()].filter((l) => l.inflight === 0 && (l.day !== today || now - l.lastUsed >= idleMs));
  }

  all(): Lease[] {
    return [...this.byId.values()];
  }
}

export class LeaseManager implements LeaseStore {
  readonly #book = new LeaseBook();
  readonly #s: ReturnType<typeof _prepare>;
  readonly #noWait: NoWait;
  readonly #acquireTx: (
    key: KeyRecord,
    day: number,
    price: number,
    now: number,
    cur: Lease | undefined,
  ) => ReserveOutcome;
  readonly #shrinkTx: (leases: Lease[], now: number, all: boolean) => void;
  acquisitions = 0;

  constructor(
    sqlite: Sqlite.Database,
    readonly holderId: string,
    private readonly opts: { workers: number; maxChunkCents: number; idleMs: number },
  ) {
    this.#s = _prepare(sqlite);
    this.#noWait = noWait(sqlite);
    this.#acquireTx = sqlite.transaction((key, day, price, now, cur) =>
      this.#acquire(key, day, price, now, cur),
    ).immediate;
    this.#shrinkTx = sqlite.transaction((leases: Lease[], now: number, all: boolean) =>
      this.#shrink(leases, now, all),
    ).immediate;
  }

  /**
   * Reserves `price` for one call; a DB transaction only when the local slice is too small. That transaction
   * never waits for the write lock: it throws SQLITE_BUSY (no-wait.ts isBusy) and the caller retries on a timer.
   */
  reserve(key: KeyRecord, day: number, price: number, now: number): ReserveOutcome {
    const lease = this.#book.take(key.keyId, day, price, now);
    if (lease) return { ok: true, lease };
    const cur = this.#book.current(key.keyId, day);
    return this.#noWait.run(() => this.#acquireTx(key, day, price, now, cur));
  }

  /** A settle for this lease committed (settle writer's onCommitted). */
  committed(leaseId: string, cents: number): void {
    this.#book.committed(leaseId, cents);
  }

  /** The call was not charged (upstream failed, client gone, settle failed): give the reservation back locally. */
  cancel(lease: Lease, cents: number): void {
    lease.inflight -= cents;
  }

  /** Returns the unused part of this org's (or key's) leases: another process needs it, or credit/caps changed. */
  shrinkWhere(pred: (l: Lease) => boolean, now: number): void {
    const hit = this.#book.unused(pred);
    if (hit.length) this.#shrinkTx(hit, now, false);
  }

  releaseIdle(now: number, today: number): void {
    const idle = this.#book.idle(now, today, this.opts.idleMs);
    if (idle.length) this.#shrinkTx(idle, now, true);
  }

  /** Shutdown: after the writer flushed, every lease goes back (unspent part returned to the org). */
  releaseAll(now: number): void {
    const all = this.#book.all();
    if (all.length) this.#shrinkTx(all, now, true);
  }

  get size(): number {
    return this.#book.byId.size;
  }

  /** Cents this process holds reserved from org balances and has not spent yet (gateway metrics). */
  get reservedCents(): number {
    let n = 0;
    for (const l of this.#book.byId.values()) n += l.amount - l.spent;
    return n;
  }

  /** Read-only: would a call of `price` pass the org balance and the key's caps right now? (quotes) */
  peek(
    key: KeyRecord,
    day: number,
    price: number,
  ): { ok: true; headroom: number } | { ok: false; code: CapCode; headroom: number } {
    const localFree = LeaseBook.free(this.#book.current(key.keyId, day));
    const h = this.#headroom(key, day);
    const headroom = Math.min(h.avail, h.headKey, h.headDay) + localFree;
    if (headroom >= price) return { ok: true, headroom };
    const code: CapCode =
      h.headKey + localFree < price
        ? 'budget_exceeded'
        : h.headDay + localFree < price
          ? 'daily_cap_exceeded'
          : 'insufficient_credits';
    return { ok: false, code, headroom };
  }

  #headroom(key: KeyRecord, day: number): { avail: number; headKey: number; headDay: number } {
    const s = this.#s;
    const bal = s.balance.get(key.orgId);
    const avail = bal ? bal.credit_cents - bal.reserved_cents : 0;
    const k = s.key.get(key.keyId);
    let headKey = INF;
    let headDay = INF;
    if (k?.budget_cents != null) headKey = k.budget_cents - k.spent_cents - s.keyOpen.get(key.keyId)!.open;
    if (k?.daily_cap_cents != null) {
      const daySpent = s.daySpent.get(key.keyId, day)?.spent_cents ?? 0;
      headDay = k.daily_cap_cents - daySpent - s.keyDayOpen.get(key.keyId, day)!.open;
    }
    return { avail, headKey, headDay };
  }

  #acquire(key: KeyRecord, day: number, price: number, now: number, cur: Lease | undefined): ReserveOutcome {
    const s = this.#s;
    // A stopped holder (shut down, or reaped while stalled) is never reaped again, so a slice it took now would stay
    // reserved for good; it could not settle against it anyway (settle-writer.ts checks the same row).
    if (!s.alive(this.holderId)) {
      throw new HolderReapedError('this gateway holder is stopped; it takes no new lease');
    }
    const localFree = LeaseBook.free(cur);
    const need = price - localFree;
    const { avail, headKey, headDay } = this.#headroom(key, day);
    const headroom = Math.min(avail, headKey, headDay);
    if (headroom < need) {
      const code: CapCode =
        headKey < need ? 'budget_exceeded' : headDay < need ? 'daily_cap_exceeded' : 'insufficient_credits';
      const othersHold = s.othersOpen.get(key.orgId, this.holderId)!.open > 0;
      return { ok: false, code, headroom: Math.max(0, headroom + localFree), othersHold };
    }
    // Big slices while credit is plentiful, shrinking to exactly the call's need as it runs low,
    // so the last cents are never stranded in another process.
    const chunk = Math.min(
      headroom,
      Math.max(need, Math.min(this.opts.maxChunkCents, Math.floor(headroom / (4 * this.opts.workers)))),
    );
    s.reserve.run(chunk, now, key.orgId);
    this.acquisitions++;
    let lease = cur;
    if (lease && s.extend.run(chunk, now + this.opts.idleMs, lease.id).changes === 1) {
      lease.amount += chunk;
    } else {
      if (lease) this.#book.forget(lease);
      lease = {
        id: newId('lease', now),
        orgId: key.orgId,
        keyId: key.keyId,
        day,
        amount: chunk,
        spent: 0,
        inflight: 0,
        lastUsed: now,
      };
      s.insert.run(lease.id, this.holderId, key.orgId, key.keyId, day, chunk, now, now + this.opts.idleMs);
      this.#book.add(lease);
    }
    lease.inflight += price;
    lease.lastUsed = now;
    return { ok: true, lease };
  }

  #shrink(leases: Lease[], now: number, all: boolean): void {
    const s = this.#s;
    for (const l of leases) {
      const keep = all ? 0 : l.spent + l.inflight;
      if (keep === 0) {
        // Released: the unspent part (amount - committed spent) returns to the org.
        const back = l.amount - l.spent;
        // A lease already released by a reaper (we were presumed dead) must not be returned twice.
        if (s.release.run(now, l.id).changes === 1 && back > 0) s.unreserve.run(back, now, l.orgId);
        this.#book.forget(l);
      } else {
        const back = l.amount - keep;
        if (back <= 0) continue;
        if (s.shrink.run(back, l.id).changes === 1) s.unreserve.run(back, now, l.orgId);
        l.amount = keep;
      }
    }
  }
}

function _prepare(db: Sqlite.Database) {
  return {
    balance: db.prepare<[string], { credit_cents: number; reserved_cents: number }>(
      'SELECT credit_cents, reserved_cents FROM balances WHERE org_id = ?',
    ),
    key: db.prepare<[string], { budget_cents: number | null; daily_cap_cents: number | null; spent_cents: number }>(
      'SELECT budget_cents, daily_cap_cents, spent_cents FROM api_keys WHERE id = ?',
    ),
    keyOpen: db.prepare<[string], { open: number }>(
      'SELECT COALESCE(SUM(amount_cents - spent_cents), 0) AS open FROM balance_leases WHERE key_id = ? AND released_at IS NULL',
    ),
    keyDayOpen: db.prepare<[string, number], { open: number }>(
      'SELECT COALESCE(SUM(amount_cents - spent_cents), 0) AS open FROM balance_leases WHERE key_id = ? AND day = ? AND released_at IS NULL',
    ),
    daySpent: db.prepare<[string, number], { spent_cents: number }>(
      'SELECT spent_cents FROM key_daily_spend WHERE key_id = ? AND day = ?',
    ),
    othersOpen: db.prepare<[string, string], { open: number }>(
      'SELECT COALESCE(SUM(amount_cents - spent_cents), 0) AS open FROM balance_leases WHERE org_id = ? AND holder_id != ? AND released_at IS NULL',
    ),
    alive: holderLiveness(db),
    reserve: db.prepare('UPDATE balances SET reserved_cents = reserved_cents + ?, updated_at = ? WHERE org_id = ?'),
    unreserve: db.prepare('UPDATE balances SET reserved_cents = reserved_cents - ?, updated_at = ? WHERE org_id = ?'),
    insert: db.prepare(
      'INSERT INTO balance_leases (id, holder_id, org_id, key_id, day, amount_cents, spent_cents, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?)',
    ),
    extend: db.prepare(
      'UPDATE balance_leases SET amount_cents = amount_cents + ?, expires_at = ? WHERE id = ? AND released_at IS NULL',
    ),
    shrink: db.prepare(
      'UPDATE balance_leases SET amount_cents = amount_cents - ? WHERE id = ? AND released_at IS NULL',
    ),
    release: db.prepare('UPDATE balance_leases SET released_at = ? WHERE id = ? AND released_at IS NULL'),
  };
}
