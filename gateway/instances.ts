/**
 * This process's row in gateway_instances (its lease-holder id), its heartbeat, and the reaper that returns
 * the unspent leases of holders that died (stale heartbeat, or, for a holder on this same host, a pid that no
 * longer exists).
 */
import type Sqlite from 'better-sqlite3';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { HolderStore } from './store.js';
import { newId } from '../core/ids.js';

let _host: string | undefined;

/**
 * This machine's identity for the holder registry: the hostname plus the kernel's boot id, so neither another
 * host with the same hostname nor this host after a reboot (pids reused) is mistaken for "here".
 * `SVC_GATEWAY_HOST_ID` overrides it: containers in their own pid namespaces on one kernel share hostname-less
 * boot ids, and the multi-host test gives each namespace "host" its own, so only staleness can reap across them.
 */
export function hostIdentity(): string {
  if (_host !== undefined) return _host;
  const set = process.env.SVC_GATEWAY_HOST_ID;
  if (set) {
    _host = set;
    return _host;
  }
  let boot = '';
  try {
    boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    // Not Linux: the hostname alone.
  }
  _host = `${hostname()}/${boot}`;
  return _host;
}

/**
 * Whether a holder is still live (not stopped, not reaped): a read, so hot-path writers can check it inside their
 * own transaction (the settle batch, a lease acquisition) and refuse to write for a holder that is gone.
 */
export function holderLiveness(db: Sqlite.Database): (holderId: string) => boolean {
  const alive = db.prepare('SELECT 1 FROM gateway_instances WHERE id = ? AND stopped_at IS NULL').pluck();
  return (holderId) => alive.get(holderId) !== undefined;
}

export class Instances implements HolderStore {
  readonly id: string;
  readonly #s: ReturnType<typeof _prepare>;
  readonly #reapTx: (holderId: string, now: number) => number;
  readonly #stopTx: (now: number) => void;

  /** `host` is this holder's host identity (hostIdentity()); tests pass another to play a remote holder. */
  constructor(
    sqlite: Sqlite.Database,
    now: number,
    readonly host: string = hostIdentity(),
  ) {
    this.id = newId('gw', now);
    this.#s = _prepare(sqlite);
    this.#s.register.run(this.id, process.pid, host, now, now);
    this.#reapTx = sqlite.transaction((holderId: string, t: number) => this.#reapOne(holderId, t)).immediate;
    this.#stopTx = sqlite.transaction((t: number) => {
      this.#s.stop.run(t, this.id);
      this.#s.dropClaims.run(this.id);
    }).immediate;
  }

  /** False when another process reaped us (we were presumed dead): the caller must stop serving. */
  heartbeat(now: number): boolean {
    return this.#s.heartbeat.run(now, this.id).changes === 1;
  }

  /**
   * Releases dead holders' open leases and in-flight idempotency claims; returns the cents returned. Dead: a
   * heartbeat older than `staleMs`, or, for a holder on this same host only, a pid that no longer exists. A pid
   * says nothing about a process on another machine: testing it there would reap live remote gateways.
   */
  reapDead(now: number, staleMs: number): number {
    let returned = 0;
    for (const h of this.#s.live.all(this.id)) {
      const dead = h.heartbeat_at < now - staleMs || (h.host === this.host && !pidAlive(h.pid));
      if (dead) returned += this.#reapTx(h.id, now);
    }
    return returned;
  }

  /**
   * A clean stop. Its in-flight Idempotency-Key claims go with it: a call shutdown could not drain will never be
   * completed or charged (a stopped holder's settle is refused), and a stopped holder is never reaped, so a claim
   * left here would hold its key for the whole TTL.
   */
  markStopped(now: number): void {
    this.#stopTx(now);
  }

  #reapOne(holderId: string, now: number): number {
    const s = this.#s;
    if (s.markDead.run(now, holderId).changes !== 1) return 0;
    let back = 0;
    for (const l of s.openLeases.all(holderId)) {
      const unspent = l.amount_cents - l.spent_cents;
      s.release.run(now, l.id);
      if (unspent > 0) s.unreserve.run(unspent, now, l.org_id);
      back += unspent;
    }
    s.dropClaims.run(holderId);
    return back;
  }
}

/** Whether a process with this pid exists on this host (EPERM: it exists, owned by someone else). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function _prepare(db: Sqlite.Database) {
  return {
    register: db.prepare(
      'INSERT INTO gateway_instances (id, pid, host, started_at, heartbeat_at) VALUES (?, ?, ?, ?, ?)',
    ),
    heartbeat: db.prepare('UPDATE gateway_instances SET heartbeat_at = ? WHERE id = ? AND stopped_at IS NULL'),
    stop: db.prepare('UPDATE gateway_instances SET stopped_at = ? WHERE id = ? AND stopped_at IS NULL'),
    live: db.prepare<[string], { id: string; pid: number; host: string; heartbeat_at: number }>(
      'SELECT id, pid, host, heartbeat_at FROM gateway_instances WHERE stopped_at IS NULL AND id != ?',
    ),
    markDead: db.prepare('UPDATE gateway_instances SET stopped_at = ? WHERE id = ? AND stopped_at IS NULL'),
    openLeases: db.prepare<[string], { id: string; org_id: string; amount_cents: number; spent_cents: number }>(
      'SELECT id, org_id, amount_cents, spent_cents FROM balance_leases WHERE holder_id = ? AND released_at IS NULL',
    ),
    release: db.prepare('UPDATE balance_leases SET released_at = ? WHERE id = ?'),
    unreserve: db.prepare('UPDATE balances SET reserved_cents = reserved_cents - ?, updated_at = ? WHERE org_id = ?'),
    dropClaims: db.prepare("DELETE FROM idempotency_records WHERE holder_id = ? AND state = 'in_flight'"),
  };
}
