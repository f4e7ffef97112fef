/**
 * The gateway's database work, one interface per concern, so the pipeline and the worker do not know which store
 * runs underneath: SQLite (the default; synchronous better-sqlite3 transactions, unchanged) or PostgreSQL
 * (`gateway/pg/`, awaited round trips). A method returns `T | Promise<T>` where SQLite answers synchronously
 * today: the SQLite paid path keeps its synchronous steps (no extra microtask per call); the pipeline already awaits
 * at the three points where PostgreSQL answers later (reserve, claim, settle).
 *
 * | concern | SQLite | PostgreSQL |
 * |---|---|---|
 * | holders, heartbeat, reaper | `instances.ts` | `pg/holders.ts` |
 * | credit leases | `leases.ts` | `pg/leases.ts` |
 * | group commit of settles | `settle-writer.ts` | `pg/settle-writer.ts` |
 * | Idempotency-Key claims | `idempotency.ts` | `pg/idempotency.ts` |
 * | change feed | `core/db/change-feed.ts` | `pg/change-feed.ts` |
 */
import type { KeyRecord } from './cache/key-cache.js';
import type { ClaimOutcome } from './idempotency.js';
import type { CapCode, Lease, ReserveOutcome } from './leases.js';
import type { SettleRecord } from './settle-writer.js';

export type MaybePromise<T> = T | Promise<T>;

/** This process's row in `gateway_instances`, its heartbeat, and the reaper of dead holders. */
export interface HolderStore {
  readonly id: string;
  /** Host identity (hostname and boot id): pids are compared only between holders of one host. */
  readonly host: string;
  /** False when another process reaped this holder: the caller must stop serving. */
  heartbeat(now: number): MaybePromise<boolean>;
  /** Releases dead holders' leases and in-flight claims; the cents returned to their orgs. */
  reapDead(now: number, staleMs: number): MaybePromise<number>;
  /** A clean stop: the holder row stopped and its in-flight claims dropped, in one transaction. */
  markStopped(now: number): MaybePromise<void>;
}

export type PeekOutcome = { ok: true; headroom: number } | { ok: false; code: CapCode; headroom: number };

/** Credit and cap leases: slices reserved in the database, spent from memory. */
export interface LeaseStore {
  readonly holderId: string;
  readonly size: number;
  acquisitions: number;
  reserve(key: KeyRecord, day: number, price: number, now: number): MaybePromise<ReserveOutcome>;
  committed(leaseId: string, cents: number): void;
  cancel(lease: Lease, cents: number): void;
  shrinkWhere(pred: (l: Lease) => boolean, now: number): MaybePromise<void>;
  releaseIdle(now: number, today: number): MaybePromise<void>;
  releaseAll(now: number): MaybePromise<void>;
  peek(key: KeyRecord, day: number, price: number): MaybePromise<PeekOutcome>;
}

/** The group commit: each settle resolves after its transaction committed, with the org's credit then. */
export interface SettleStore {
  settle(rec: SettleRecord): Promise<number>;
  readonly pending: number;
  readonly written: number;
  readonly batches: number;
  /** Writes what is queued now; `blocking` (shutdown) also refuses queued claims. */
  flush(blocking?: boolean): MaybePromise<void>;
  /** The server's count of calls in flight, for a writer that gathers a batch while calls are still coming. */
  countInFlight?(count: () => number): void;
}

/** Idempotency-Key claims: committed before the call is forwarded, completed in the call's settle. */
export interface ClaimStore {
  claim(orgId: string, key: string, requestHash: string, requestId: string, now: () => number): Promise<ClaimOutcome>;
  /** The call was not charged: free the key so a retry runs again (background; never throws). */
  abandon(orgId: string, key: string, requestId: string): void;
}

/** Cross-process invalidation (core/db/change-feed.ts, both stores). */
export type { ChangeSource } from '../core/db/change-feed.js';
