/**
 * Micro-benchmark of the gateway's group-commit settle writer (gateway/settle-writer.ts): paid-call settles
 * (a usage row per call; per commit a ledger entry, a provider earning, lease + balance, key and daily spend) for a fixed duration,
 * while the gateway's checkpoint thread (gateway/checkpointer.ts) runs WAL checkpoints. Prints one JSON line with the sustained rate.
 */
import { statSync } from 'node:fs';
import { openDatabase } from '../../core/db/database.js';
import { utcDay } from '../../core/clock.js';
import { microDb, importGateway } from './micro-db.js';
import { paidCallRecord } from '../../test/helpers/db.js';

export interface LedgerResult {
  /** Settled paid calls per second over the whole run (see header for what one settle writes). */
  rowsPerSec: number;
  /** The slowest 1-second window: "sustained" means this one too. */
  minWindowRowsPerSec: number;
  /** Settles per CPU-second of this process (all threads): the rate with a core to itself. */
  rowsPerCpuSec: number;
  rows: number;
  /** Rows appended per second, counted in the file afterwards (usage_calls + ledger_entries + provider_earnings). */
  appendedRowsPerSec: number;
  /** Appended rows per settle, counted (the writer also updates balance, lease and spend projections). */
  appendedPerSettle: number;
  /** CPU µs of one plain INSERT (integer key, no index) on this machine, 128 per commit: to compare machines. */
  calibrationInsertUs: number;
  seconds: number;
  batch: number;
  checkpoints: number;
  checkpointMsMax: number;
  /** Checkpoint passes that restarted the WAL (it passed the limit). */
  restarts?: number;
  /** The checkpoint settings the run used (the gateway's defaults). */
  checkpointMs?: number;
  checkpointFrames?: number;
  walLimitBytes?: number;
  walMaxBytes: number;
  /** Ledger check after the run: balance dropped by exactly the rows written. */
  consistent: boolean;
  error?: string;
}

interface CheckpointerModule {
  startBackground(o: {
    file: string;
    checkpointMs: number;
    checkpointFrames?: number;
    walLimitBytes: number;
    holderId: string | null;
    heartbeatMs: number;
    onReaped: () => void;
    onCheckpoint?: (c: { ms: number; frames: number; restarted: boolean }) => void;
  }): () => Promise<void>;
  configureWriterConnection(sqlite: unknown, o: { checkpointMs: number; walLimitBytes: number }): void;
}

interface FastIdModule {
  fastId(prefix: 'req', ms?: number): string;
}

interface NoWaitModule {
  neverWait(sqlite: unknown): void;
}

interface ConfigModule {
  loadGatewayConfig(env: Record<string, string>): {
    checkpointMs: number;
    checkpointFrames: number;
    walLimitBytes: number;
  };
}

interface WriterModule {
  SettleWriter: typeof import('../../gateway/settle-writer.js').SettleWriter;
}

const CREDIT = 1_000_000_000;

/** How fast this machine does the simplest SQLite insert, in the same file and mode as the writer. */
function _calibrate(sq: import('better-sqlite3').Database): number {
  sq.exec('CREATE TABLE IF NOT EXISTS bench_cal (id INTEGER PRIMARY KEY, a TEXT, b INTEGER)');
  const ins = sq.prepare('INSERT INTO bench_cal (a, b) VALUES (?, ?)');
  const n = 50_000;
  const c0 = process.cpuUsage();
  for (let b = 0; b < n / 125; b++) {
    sq.exec('BEGIN IMMEDIATE');
    for (let j = 0; j < 125; j++) ins.run('x', j);
    sq.exec('COMMIT');
  }
  const c = process.cpuUsage(c0);
  sq.exec('DROP TABLE bench_cal');
  return Math.round(((c.user + c.system) / n) * 100) / 100;
}
const LEASE = 900_000_000;

async function _main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? '10');
  const batch = Number(process.argv[3] ?? '128');
  const m = await microDb(CREDIT);
  const h = openDatabase(m.file);
  const sq = h.sqlite;
  let stopCheckpoints: (() => Promise<void>) | null = null;
  try {
    const { SettleWriter } = await importGateway<WriterModule>('settle-writer.js');
    const { fastId } = await importGateway<FastIdModule>('fast-id.js');
    const { neverWait } = await importGateway<NoWaitModule>('no-wait.js');
    const { startBackground, configureWriterConnection } = await importGateway<CheckpointerModule>('checkpointer.js');
    // The gateway's own defaults (gateway/config.ts), not a copy of them.
    const { checkpointMs, checkpointFrames, walLimitBytes } = (
      await importGateway<ConfigModule>('config.js')
    ).loadGatewayConfig({});
    const now = Date.now();
    const day = utcDay(now);
    const holderId = 'gwi_bench';
    sq.prepare('INSERT INTO gateway_instances (id, pid, started_at, heartbeat_at) VALUES (?, ?, ?, ?)').run(
      holderId,
      process.pid,
      now,
      now,
    );
    sq.prepare(
      'INSERT INTO balance_leases (id, holder_id, org_id, key_id, day, amount_cents, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ).run('lease_bench', holderId, m.consumer.orgId, m.consumer.keyId, day, LEASE, now, now + 3_600_000);
    sq.prepare('UPDATE balances SET reserved_cents = reserved_cents + ? WHERE org_id = ?').run(LEASE, m.consumer.orgId);
    // As the gateway runs (gateway/worker.ts): the writer connection configured the same way (and never waiting
    // on the lock), and the gateway's own checkpoint thread with its default settings.
    configureWriterConnection(sq, { checkpointMs, walLimitBytes });
    neverWait(sq);
    const writer = new SettleWriter(sq, { holderId, platformFeeBps: 2000 });

    const cps: { ms: number; restarted: boolean }[] = [];
    stopCheckpoints = startBackground({
      file: m.file,
      checkpointMs,
      checkpointFrames,
      walLimitBytes,
      holderId: null,
      heartbeatMs: 60_000,
      onReaped: () => {},
      onCheckpoint: (c) => cps.push(c),
    });

    const rec = () => {
      const t = Date.now();
      return paidCallRecord(
        {
          orgId: m.consumer.orgId,
          keyId: m.consumer.keyId,
          apiId: m.apiId,
          endpointId: m.endpointId,
          providerOrgId: m.providerOrgId,
        },
        'lease_bench',
        day,
        fastId('req', t),
        t,
      );
    };
    const windows: number[] = [];
    let walMax = 0;
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    let windowStart = t0;
    let windowRows = 0;
    while (performance.now() - t0 < seconds * 1000) {
      const ps: Promise<number>[] = [];
      for (let i = 0; i < batch; i++) ps.push(writer.settle(rec()));
      await Promise.all(ps);
      windowRows += batch;
      const t = performance.now();
      if (t - windowStart >= 1000) {
        windows.push((windowRows * 1000) / (t - windowStart));
        windowRows = 0;
        windowStart = t;
        walMax = Math.max(walMax, statSync(m.file + '-wal').size);
      }
    }
    const elapsed = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(c0);
    // Measured; stop the checkpoint thread so the checks and the calibration below never meet its lock.
    await stopCheckpoints();
    stopCheckpoints = null;
    const rows = writer.written;
    const bal = sq.prepare('SELECT credit_cents FROM balances WHERE org_id = ?').get(m.consumer.orgId) as {
      credit_cents: number;
    };
    const charged = sq
      .prepare("SELECT -SUM(amount_cents) AS s FROM ledger_entries WHERE org_id = ? AND kind = 'call_charge'")
      .get(m.consumer.orgId) as { s: number };
    const count = (q: string) => (sq.prepare(q).pluck().get() as number) ?? 0;
    const appended =
      count('SELECT COUNT(*) FROM usage_calls') +
      count("SELECT COUNT(*) FROM ledger_entries WHERE kind = 'call_charge'") +
      count('SELECT COUNT(*) FROM provider_earnings');
    const out: LedgerResult = {
      rowsPerSec: Math.round(rows / elapsed),
      minWindowRowsPerSec: Math.round(Math.min(...windows)),
      rowsPerCpuSec: Math.round(rows / ((cpu.user + cpu.system) / 1e6)),
      rows,
      appendedRowsPerSec: Math.round(appended / elapsed),
      appendedPerSettle: Math.round((appended / rows) * 100) / 100,
      calibrationInsertUs: _calibrate(sq),
      seconds: Math.round(elapsed * 10) / 10,
      batch,
      checkpoints: cps.length,
      checkpointMsMax: Math.round(Math.max(0, ...cps.map((c) => c.ms)) * 10) / 10,
      restarts: cps.filter((c) => c.restarted).length,
      checkpointMs,
      checkpointFrames,
      walLimitBytes,
      walMaxBytes: walMax,
      consistent: bal.credit_cents === CREDIT - rows && charged.s === rows,
    };
    process.stdout.write(JSON.stringify(out) + '\n');
  } catch (e) {
    process.stdout.write(JSON.stringify({ rowsPerSec: null, seconds, batch, error: (e as Error).message }) + '\n');
  } finally {
    await stopCheckpoints?.();
    h.close();
    m.cleanup();
  }
}

void _main();
