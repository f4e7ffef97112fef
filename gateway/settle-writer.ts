/**
 * Group commit of call outcomes: every settle enqueued during one event-loop turn (two, while other calls are in
 * flight: `#turn`) is written in ONE `BEGIN IMMEDIATE` transaction, and each caller's promise resolves only after
 * that COMMIT, so an answered call is always a recorded call. Per call the transaction appends one narrow usage row
 * (`usage_calls`: its request id, integer nums for its org, key, API, endpoint and provider from `id_nums`, integers
 * for the rest; docs/gateway.md "The usage row"); the money moves once per batch: one `call_charge` ledger entry per
 * key and one provider earning per (provider, API) carrying the batch's sums, plus the balance, lease, key and
 * daily-spend projections. Usable without a server: `new SettleWriter(sqlite, opts)`.
 * Other hot-path writes that must commit before their caller goes on (the Idempotency-Key claim) join the same
 * transaction through `join`, so a turn's claims and settles cost one commit, not one each.
 */
import type Sqlite from 'better-sqlite3';
import { fastId } from './fast-id.js';
import { holderLiveness } from './instances.js';
import { splitPlatformFee } from '../core/platform-fee.js';
import type { SettleStore } from './store.js';
import { LOCK_RETRY_LIMIT_MS, LOCK_RETRY_MS, isBusy, noWait, waitingForLock, type NoWait } from './no-wait.js';

export interface SettleRecord {
  requestId: string;
  orgId: string;
  keyId: string;
  apiId: string;
  endpointId: string;
  providerOrgId: string;
  method: string;
  status: number;
  latencyMs: number;
  /** Price quoted for the call (after discounts). */
  priceCents: number;
  /** What is charged: the price for a successful call, 0 for free or failed calls. */
  chargedCents: number;
  errorCode: string | null;
  createdAt: number;
  /** The lease the charge was reserved from (required when chargedCents > 0, unless `unleased`). */
  leaseId: string | null;
  /** UTC day number of the charge (key_daily_spend). */
  day: number;
  /** Idempotency record to complete in the same transaction. */
  idempotency?: { orgId: string; idemKey: string; status: number; headersJson: string; body: Buffer | null };
}

export interface SettleWriterOptions {
  /** gateway_instances.id of this process; each batch checks it is still live and aborts if it was reaped. */
  holderId: string | null;
  platformFeeBps: number;
  /** How long a batch keeps retrying a write lock held elsewhere before its calls fail (default 5 s). */
  lockWaitLimitMs?: number;
  /** Called after a batch commits, before callers are resumed (lease accounting). */
  onCommitted?: (records: readonly SettleRecord[]) => void;
  /** How long each committed batch's transaction took, ms (gateway metrics). */
  onCommitTime?: (ms: number) => void;
}

/** Thrown (to every waiter) when another process declared this holder dead and released its leases. */
export class HolderReapedError extends Error {}

/** Rejects a write joined to the batch (`join`) that is still queued when shutdown flushes (`flush(true)`). */
export class WriterStoppingError extends Error {}

interface Waiter {
  rec: SettleRecord;
  resolve: (balanceCents: number) => void;
  reject: (e: unknown) => void;
}

/** A write joined to the next batch: run inside its transaction, resolved with its result after the COMMIT. */
interface Joined {
  write: () => unknown;
  resolve: (result: unknown) => void;
  reject: (e: unknown) => void;
}

export class SettleWriter implements SettleStore {
  #queue: Waiter[] = [];
  #joined: Joined[] = [];
  #scheduled = false;
  /** The scheduled batch already waited its one extra turn (`#turn`). */
  #waited = false;
  #inFlight: (() => number) | null = null;
  readonly #sqlite: Sqlite.Database;
  readonly #opts: SettleWriterOptions;
  readonly #s: ReturnType<typeof _prepare>;
  readonly #noWait: NoWait;
  readonly #lockWaitLimitMs: number;
  /** When the write lock was first found held by another connection, while retrying (null = not retrying). */
  #busySince: number | null = null;
  /** id_nums committed so far (append-only, so never stale). */
  readonly #nums = new Map<string, number>();
  /** Calls settled since start, and the transactions that carried them (average batch = written / batches). */
  written = 0;
  batches = 0;

  constructor(sqlite: Sqlite.Database, opts: SettleWriterOptions) {
    this.#sqlite = sqlite;
    this.#opts = opts;
    this.#s = _prepare(sqlite);
    this.#noWait = noWait(sqlite);
    this.#lockWaitLimitMs = opts.lockWaitLimitMs ?? LOCK_RETRY_LIMIT_MS;
  }

  /** Resolves after the record's transaction committed, with the org's credit_cents right after it. */
  settle(rec: SettleRecord): Promise<number> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ rec, resolve, reject });
      this.#schedule();
    });
  }

  /**
   * Runs `write` inside the next batch's transaction (after that batch's settles) and resolves with its result
   * once the batch committed; rejects when the batch could not be written (the lock never came free, the holder
   * was reaped) or `write` threw. `write` must only touch the database and be safe to run again (a failed batch
   * is retried piece by piece).
   */
  join<T>(write: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#joined.push({ write, resolve: resolve as (r: unknown) => void, reject });
      this.#schedule();
    });
  }

  /**
   * The calls this process has in flight (the server's count): while some of them have not reached this writer
   * yet, a batch waits one more event-loop turn for them (`#turn`). Unset (a writer without a server), each turn's
   * settles commit at the end of that turn.
   */
  countInFlight(count: () => number): void {
    this.#inFlight = count;
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    this.#waited = false;
    setImmediate(this.#turn);
  }

  /**
   * A batch's end of turn. Under load a gateway's calls move in two alternating cohorts (one waits on its
   * upstreams while the other's answers arrive and commit), so one turn's window splits them into two half-sized
   * commits. When calls are in flight that have not reached the writer, the batch waits ONE more turn to take in
   * the next cohort (PostgreSQL's commit_delay/commit_siblings idea, bounded by a turn instead of a clock): about
   * twice the calls per commit at 50 connections (bench/RESULTS.md). Never more than one turn: a third gathered
   * almost nothing more. At one call in flight nothing waits, so a lone call's answer is not delayed.
   */
  readonly #turn = (): void => {
    if (!this.#waited && this.#scheduled && this.#inFlight !== null && this.#inFlight() > this.pending) {
      this.#waited = true;
      setImmediate(this.#turn);
      return;
    }
    this.flush();
  };

  get pending(): number {
    return this.#queue.length + this.#joined.length;
  }

  /**
   * Writes everything queued now. When another connection holds the write lock, the batch stays queued and is
   * retried on a timer, so the event loop never sleeps on the lock (callers simply wait longer). `blocking`
   * (shutdown) waits on the lock instead, up to the lock-wait limit, and refuses joined writes (WriterStoppingError).
   */
  flush(blocking = false): void {
    this.#scheduled = false;
    const batch = this.#queue;
    let joined = this.#joined;
    if (batch.length === 0 && joined.length === 0) return;
    this.#queue = [];
    this.#joined = [];
    if (blocking && joined.length > 0) {
      // Shutdown's last flush: answered calls are recorded, but a claim committed now would let its call be
      // forwarded after the holder stopped (its claims dropped, its settles refused). Refused instead: not charged.
      const stopping = new WriterStoppingError('this gateway is stopping; it takes no new Idempotency-Key claim');
      for (const j of joined) j.reject(stopping);
      joined = [];
      if (batch.length === 0) return;
    }
    let written: { balances: number[]; results: unknown[] };
    try {
      const started = performance.now();
      written = this.#write(
        batch.map((w) => w.rec),
        joined,
        blocking,
      );
      this.#opts.onCommitTime?.(performance.now() - started);
      this.#busySince = null;
    } catch (e) {
      if (isBusy(e) && !blocking) {
        const now = Date.now();
        this.#busySince ??= now;
        if (now - this.#busySince < this.#lockWaitLimitMs) {
          this.#queue = batch.concat(this.#queue);
          this.#joined = joined.concat(this.#joined);
          this.#scheduled = true;
          setTimeout(() => this.flush(), LOCK_RETRY_MS);
          return;
        }
      }
      this.#busySince = null;
      // Reaped, or the lock never came free: nothing of the batch was written, and retrying it piece by piece
      // would only wait again.
      if (e instanceof HolderReapedError || isBusy(e) || batch.length + joined.length === 1) {
        for (const w of batch) w.reject(e);
        for (const j of joined) j.reject(e);
        return;
      }
      // Isolate the bad piece: retry one by one so one failure does not fail its neighbours.
      for (const w of batch) {
        try {
          w.resolve(this.#write([w.rec], [], blocking).balances[0]!);
        } catch (e1) {
          w.reject(e1);
        }
      }
      for (const j of joined) {
        try {
          j.resolve(this.#write([], [j], blocking).results[0]);
        } catch (e1) {
          j.reject(e1);
        }
      }
      return;
    }
    for (const [i, w] of batch.entries()) w.resolve(written.balances[i]!);
    for (const [i, j] of joined.entries()) j.resolve(written.results[i]);
  }

  /** One transaction: never waiting for the lock (SQLITE_BUSY instead), or, `blocking`, waiting up to the limit. */
  #write(records: SettleRecord[], joined: Joined[], blocking: boolean): { balances: number[]; results: unknown[] } {
    const write = () => this.#writeBatch(records, joined);
    return blocking ? waitingForLock(this.#sqlite, this.#lockWaitLimitMs, write) : this.#noWait.run(write);
  }

  // Long: the hot group commit: one SQLite transaction of prepared statements over a batch of settled calls, in the
  // order the ledger needs.
  #writeBatch(records: SettleRecord[], joined: Joined[]): { balances: number[]; results: unknown[] } {
    const s = this.#s;
    const now = records.length > 0 ? records[records.length - 1]!.createdAt : 0;
    let balances: number[];
    let results: unknown[];
    s.begin.run();
    try {
      // A read, not a heartbeat write: one page fewer per commit (instances.ts heartbeats on a timer).
      if (this.#opts.holderId !== null && !s.alive(this.#opts.holderId)) {
        throw new HolderReapedError('this gateway holder was reaped by another process');
      }
      // One usage row per call; everything else once per batch with the batch's sums. Per-call ledger and
      // earning rows tripled the b-tree pages (and WAL bytes) of every commit for no extra information: the
      // usage row already names the call, its key, API and charge (see control/ledger/README.md).
      const agg = new _Sums();
      const nums = new _Nums(s, this.#nums);
      _insertUsage(s, records, nums);
      for (const r of records) _sumCall(s, r, this.#opts.platformFeeBps, agg);
      agg.close();
      const batchId = fastId('bat', now);
      for (const c of agg.charges.values()) {
        s.ledger.run(
          fastId('txn', now),
          c.orgId,
          c.keyId,
          -c.cents,
          `${c.calls} ${c.calls === 1 ? 'call' : 'calls'}`,
          batchId,
          `calls:${batchId}:${c.keyId}`,
          now,
        );
      }
      for (const e of agg.earnings.values()) {
        s.earning.run(
          fastId('txn', now),
          e.providerOrgId,
          e.apiId,
          e.gross,
          e.fee,
          e.gross - e.fee,
          batchId,
          `earn:${batchId}:${e.providerOrgId}:${e.apiId}`,
          now,
        );
      }
      for (const [leaseId, c] of agg.lease) {
        if (s.leaseSpend.run(c, leaseId, c).changes !== 1) throw new Error(`lease ${leaseId} is released or exhausted`);
      }
      // The UPDATEs return the org's credit after them, so an org charged in this batch needs no second read.
      const credit = new Map<string, number>();
      for (const [orgId, c] of agg.orgLeased) {
        const left = s.balanceLeased.get(c, c, now, orgId) as number | undefined;
        if (left === undefined) throw new Error('balance row missing');
        credit.set(orgId, left);
      }
      for (const [orgId, c] of agg.orgDirect) {
        const left = s.balanceDirect.get(c, now, orgId, c) as number | undefined;
        if (left === undefined) throw new Error('insufficient unreserved credit for an unleased charge');
        credit.set(orgId, left);
      }
      for (const [keyId, c] of agg.key) s.keySpend.run(c, now, keyId);
      for (const keyId of agg.usedOnly) if (!agg.key.has(keyId)) s.lastUsed.run(now, keyId);
      for (const [k, c] of agg.day) {
        const i = k.lastIndexOf(':');
        s.daySpend.run(k.slice(0, i), Number(k.slice(i + 1)), c);
      }
      // Each caller learns its org's credit right after its own call: the final credit plus later calls' charges.
      const running = credit;
      for (const r of records)
        if (!running.has(r.orgId)) running.set(r.orgId, (s.balance.get(r.orgId) as number | undefined) ?? 0);
      balances = new Array<number>(records.length);
      for (let i = records.length - 1; i >= 0; i--) {
        const r = records[i]!;
        const v = running.get(r.orgId)!;
        balances[i] = v;
        running.set(r.orgId, v + r.chargedCents);
      }
      // After the settles: a claim joined in the turn its first call completed finds the record done (replay).
      results = joined.map((j) => j.write());
      s.commit.run();
      nums.committed();
    } catch (e) {
      if (this.#sqlite.inTransaction) this.#sqlite.exec('ROLLBACK');
      throw e;
    }
    if (records.length > 0) {
      this.written += records.length;
      this.batches++;
      this.#opts.onCommitted?.(records);
    }
    return { balances, results };
  }
}

interface _Charge {
  orgId: string;
  keyId: string;
  cents: number;
  calls: number;
}

interface _Earning {
  providerOrgId: string;
  apiId: string;
  gross: number;
  /** Sum of each call's own fee (floor per call), so batching never changes what the provider nets. */
  fee: number;
}

/** Consecutive calls with the same key, org, lease, day, provider and API, summed (_sumCall). */
interface _Run {
  keyId: string;
  orgId: string;
  leaseId: string | null;
  day: number;
  providerOrgId: string;
  apiId: string;
  /** Charged cents, charged calls, and the sum of each charged call's own (floored) fee. */
  cents: number;
  calls: number;
  fee: number;
  /** The last charged amount and its fee: the fee is computed once per distinct price in a run. */
  lastCents: number;
  lastFee: number;
}

class _Sums {
  /** By key id (a key belongs to one org). */
  readonly charges = new Map<string, _Charge>();
  /** By provider and API: the provider is whoever the call's record says earned it, never inferred from the API. */
  readonly earnings = new Map<string, _Earning>();
  readonly lease = new Map<string, number>();
  readonly orgLeased = new Map<string, number>();
  readonly orgDirect = new Map<string, number>();
  readonly key = new Map<string, number>();
  readonly day = new Map<string, number>();
  readonly usedOnly = new Set<string>();
  /** The calls being summed now (_sumCall); `close` adds them to the maps above. */
  run: _Run | null = null;

  close(): void {
    if (this.run !== null) _closeRun(this, this.run);
    this.run = null;
  }
}

function _add(m: Map<string, number>, k: string, c: number): void {
  m.set(k, (m.get(k) ?? 0) + c);
}

/** Text id → id_nums.num inside the batch's transaction: nums assigned here are cached only once it committed. */
class _Nums {
  readonly #fresh = new Map<string, number>();
  constructor(
    private readonly s: ReturnType<typeof _prepare>,
    private readonly known: Map<string, number>,
  ) {}

  of(id: string): number {
    const k = this.known.get(id);
    if (k !== undefined) return k;
    let n = this.#fresh.get(id);
    if (n === undefined) {
      n = (this.s.numGet.get(id) as number | undefined) ?? (this.s.numAdd.get(id) as number);
      this.#fresh.set(id, n);
    }
    return n;
  }

  committed(): void {
    for (const [id, n] of this.#fresh) this.known.set(id, n);
  }
}

/** Rows per multi-row usage INSERT, largest first; a batch is written greedily in these chunks (128 settles: one
 * statement; 127: eight), so each statement step carries many rows instead of one N-API call and one step per row.
 * 128-row chunks cost ~7 % less per row than 64-row ones at 128 and 512 per commit; 256-row ones no less. */
export const USAGE_CHUNKS = [128, 64, 16, 4, 1] as const;
const USAGE_COLS = 13;

/** One usage row per call, in the records' order, in chunks of USAGE_CHUNKS rows per statement. */
function _insertUsage(s: ReturnType<typeof _prepare>, records: readonly SettleRecord[], nums: _Nums): void {
  let i = 0;
  for (let c = 0; c < USAGE_CHUNKS.length; c++) {
    const size = USAGE_CHUNKS[c]!;
    if (records.length - i < size) continue;
    const stmt = s.usage[c]!;
    const params = new Array<unknown>(size * USAGE_COLS);
    while (records.length - i >= size) {
      for (let j = 0; j < size; j++) _usageParams(records[i + j]!, nums, params, j * USAGE_COLS);
      stmt.run(params);
      i += size;
    }
  }
}

function _usageParams(r: SettleRecord, nums: _Nums, p: unknown[], o: number): void {
  p[o] = r.requestId;
  p[o + 1] = nums.of(r.orgId);
  p[o + 2] = nums.of(r.keyId);
  p[o + 3] = nums.of(r.apiId);
  p[o + 4] = nums.of(r.endpointId);
  p[o + 5] = nums.of(r.providerOrgId);
  p[o + 6] = r.method;
  p[o + 7] = r.status;
  p[o + 8] = r.latencyMs;
  p[o + 9] = r.priceCents;
  p[o + 10] = r.chargedCents;
  p[o + 11] = r.errorCode;
  p[o + 12] = r.createdAt;
}

/**
 * A call's share of the batch's sums, and its Idempotency-Key record completed. Consecutive calls by the same
 * key, lease, day, provider and API (a busy key's whole batch, typically) are summed in `agg.run` first and reach
 * the maps once per run: the same integer sums, and every map sees its keys first in the same order as call by call.
 */
function _sumCall(s: ReturnType<typeof _prepare>, r: SettleRecord, feeBps: number, agg: _Sums): void {
  let run = agg.run;
  if (
    run === null ||
    run.keyId !== r.keyId ||
    run.orgId !== r.orgId ||
    run.leaseId !== r.leaseId ||
    run.day !== r.day ||
    run.providerOrgId !== r.providerOrgId ||
    run.apiId !== r.apiId
  ) {
    if (run !== null) _closeRun(agg, run);
    run = agg.run = {
      keyId: r.keyId,
      orgId: r.orgId,
      leaseId: r.leaseId,
      day: r.day,
      providerOrgId: r.providerOrgId,
      apiId: r.apiId,
      cents: 0,
      calls: 0,
      fee: 0,
      lastCents: 0,
      lastFee: 0,
    };
  }
  const c = r.chargedCents;
  if (c > 0) {
    // The fee is floored per call (splitPlatformFee), never on a sum; calls of one run mostly share a price.
    if (c !== run.lastCents) {
      run.lastCents = c;
      run.lastFee = splitPlatformFee(c, feeBps).feeCents;
    }
    run.cents += c;
    run.fee += run.lastFee;
    run.calls++;
  }
  const idem = r.idempotency;
  if (idem) s.idemDone.run(idem.status, idem.headersJson, idem.body, idem.orgId, idem.idemKey, r.requestId);
}

/** Adds a run of calls (see _sumCall) to the batch's sums. */
function _closeRun(agg: _Sums, run: _Run): void {
  agg.usedOnly.add(run.keyId);
  const c = run.cents;
  if (c === 0) return;
  const charge = agg.charges.get(run.keyId);
  if (charge) {
    charge.cents += c;
    charge.calls += run.calls;
  } else agg.charges.set(run.keyId, { orgId: run.orgId, keyId: run.keyId, cents: c, calls: run.calls });
  const earningKey = `${run.providerOrgId}\u0000${run.apiId}`;
  const earning = agg.earnings.get(earningKey);
  if (earning) {
    earning.gross += c;
    earning.fee += run.fee;
  } else agg.earnings.set(earningKey, { providerOrgId: run.providerOrgId, apiId: run.apiId, gross: c, fee: run.fee });
  if (run.leaseId !== null) {
    _add(agg.lease, run.leaseId, c);
    _add(agg.orgLeased, run.orgId, c);
  } else _add(agg.orgDirect, run.orgId, c);
  _add(agg.key, run.keyId, c);
  _add(agg.day, `${run.keyId}:${run.day}`, c);
}

function _prepare(db: Sqlite.Database) {
  return {
    begin: db.prepare('BEGIN IMMEDIATE'),
    commit: db.prepare('COMMIT'),
    balance: db.prepare('SELECT credit_cents FROM balances WHERE org_id = ?').pluck(),
    alive: holderLiveness(db),
    usage: USAGE_CHUNKS.map((n) =>
      db.prepare(
        `INSERT INTO usage_calls (request_id, org_num, key_num, api_num, endpoint_num, provider_num, method, status, latency_ms, price_cents, charged_cents, error_code, created_at)
         VALUES ${new Array<string>(n).fill('(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
      ),
    ),
    numGet: db.prepare('SELECT num FROM id_nums WHERE id = ?').pluck(),
    numAdd: db.prepare('INSERT INTO id_nums (id) VALUES (?) RETURNING num').pluck(),
    ledger: db.prepare(
      `INSERT INTO ledger_entries (id, org_id, key_id, kind, status, amount_cents, reason, ref_type, ref_id, idempotency_key, created_at)
       VALUES (?, ?, ?, 'call_charge', 'settled', ?, ?, 'usage_batch', ?, ?, ?)`,
    ),
    leaseSpend: db.prepare(
      'UPDATE balance_leases SET spent_cents = spent_cents + ? WHERE id = ? AND released_at IS NULL AND spent_cents + ? <= amount_cents',
    ),
    balanceLeased: db
      .prepare(
        'UPDATE balances SET credit_cents = credit_cents - ?, reserved_cents = reserved_cents - ?, updated_at = ? WHERE org_id = ? RETURNING credit_cents',
      )
      .pluck(),
    balanceDirect: db
      .prepare(
        'UPDATE balances SET credit_cents = credit_cents - ?, updated_at = ? WHERE org_id = ? AND credit_cents - reserved_cents >= ? RETURNING credit_cents',
      )
      .pluck(),
    keySpend: db.prepare('UPDATE api_keys SET spent_cents = spent_cents + ?, last_used_at = ? WHERE id = ?'),
    lastUsed: db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?'),
    daySpend: db.prepare(
      `INSERT INTO key_daily_spend (key_id, day, spent_cents) VALUES (?, ?, ?)
       ON CONFLICT (key_id, day) DO UPDATE SET spent_cents = spent_cents + excluded.spent_cents`,
    ),
    earning: db.prepare(
      `INSERT INTO provider_earnings (id, provider_org_id, api_id, kind, gross_cents, fee_cents, net_cents, ref_id, idempotency_key, created_at)
       VALUES (?, ?, ?, 'earning', ?, ?, ?, ?, ?, ?)`,
    ),
    idemDone: db.prepare(
      `UPDATE idempotency_records SET state = 'done', response_status = ?, response_headers_json = ?, response_body = ?
       WHERE org_id = ? AND idem_key = ? AND request_id = ?`,
    ),
  };
}
