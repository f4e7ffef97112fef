/**
 * Micro-benchmark of the gateway's PostgreSQL group commit (gateway/pg/settle-writer.ts): W gateway writer
 * processes (default 3), each its own holder and lease of ONE shared org, settle paid calls (1 cent) against one
 * throwaway PostgreSQL 15 (Debian binaries, fsync on, synchronous_commit on, loopback) for a fixed duration, with
 * `outstanding` settles in flight per writer. Reports the settles/s PostgreSQL takes, each writer's CPU per settle
 * (the gateway-side cost of the DB work of a paid call), PostgreSQL's CPU per settle, and the commit latency p50/p99
 * seen by the writers; then checks the books. Root only (initdb runs as `postgres`).
 *
 *   node dist/bench/micro/pg-writer.bench.js [seconds=8] [writers=3] [outstanding=256]
 * Prints one JSON line.
 */
import { execFileSync, fork } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openPostgres } from '../../core/db/database.js';
import { migrateToLatest } from '../../core/db/migrate.js';
import { utcDay } from '../../core/clock.js';
import { Pg, sql } from '../../gateway/pg/connect.js';
import { PgHolders } from '../../gateway/pg/holders.js';
import { PgSettleWriter } from '../../gateway/pg/settle-writer.js';
import { fastId } from '../../gateway/fast-id.js';
import { paidCallRecord } from '../../test/helpers/db.js';

const PGBIN = '/usr/lib/postgresql/15/bin';
const CREDIT = 1_000_000_000;
const LEASE = 100_000_000;

/** What the run prints (null rate when it could not run here). */
export interface PgWriterResult {
  writers: number;
  outstanding: number;
  seconds: number;
  settlesPerSec: number | null;
  avgBatch?: number;
  /** CPU of the gateway writer processes per settle (their share of a paid call's DB work). */
  writerCpuUsPerSettle?: number;
  /** CPU of every PostgreSQL process per settle. */
  pgCpuUsPerSettle?: number;
  commitP50Ms?: number;
  commitP99Ms?: number;
  consistent?: boolean;
  error?: string;
}

interface WriterResult {
  settles: number;
  batches: number;
  cpuUs: number;
  seconds: number;
  p50Ms: number;
  p99Ms: number;
}

const asPg = (cmd: string) => execFileSync('su', ['postgres', '-s', '/bin/sh', '-c', cmd], { stdio: 'pipe' });

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}

/** utime + stime (clock ticks) of every process of the PostgreSQL cluster whose postmaster is `pid`. */
function pgCpuTicks(postmaster: number): number {
  let sum = 0;
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const st = readFileSync(`/proc/${d}/stat`, 'utf8');
      const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
      const pid = Number(d);
      const ppid = Number(f[1]);
      // The postmaster's own time plus its reaped children's (backends that already exited), and live children.
      if (pid === postmaster) sum += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
      else if (ppid === postmaster) sum += Number(f[11]) + Number(f[12]);
    } catch {
      // gone meanwhile
    }
  }
  return sum;
}

async function writer(url: string, orgId: string, keyId: string, seconds: number, outstanding: number) {
  const db = new Pg(url, { max: 2 });
  const holder = await PgHolders.register(db, Date.now());
  const now = Date.now();
  const day = utcDay(now);
  const leaseId = `lease_${holder.id}`;
  await db.pipeline([
    sql`INSERT INTO balance_leases (id, holder_id, org_id, key_id, day, amount_cents, created_at, expires_at)
        VALUES (${leaseId}, ${holder.id}, ${orgId}, ${keyId}, ${day}, ${LEASE}, ${now}, ${now + 3_600_000})`,
    sql`UPDATE balances SET reserved_cents = reserved_cents + ${LEASE} WHERE org_id = ${orgId}`,
  ]);
  const w = new PgSettleWriter(db, { holderId: holder.id, platformFeeBps: 2000 });
  const lat: number[] = [];
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const until = t0 + seconds * 1000;
  const one = async (): Promise<void> => {
    while (performance.now() < until) {
      const t = Date.now();
      const s = performance.now();
      await w.settle(
        paidCallRecord(
          { orgId, keyId, apiId: 'api_bench', endpointId: 'ep_bench', providerOrgId: 'org_bench_p' },
          leaseId,
          day,
          fastId('req', t),
          t,
        ),
      );
      lat.push(performance.now() - s);
    }
  };
  await Promise.all(Array.from({ length: outstanding }, one));
  const cpu = process.cpuUsage(c0);
  lat.sort((a, b) => a - b);
  const r: WriterResult = {
    settles: w.written,
    batches: w.batches,
    cpuUs: cpu.user + cpu.system,
    seconds: (performance.now() - t0) / 1000,
    p50Ms: lat[Math.floor(lat.length * 0.5)] ?? 0,
    p99Ms: lat[Math.floor(lat.length * 0.99)] ?? 0,
  };
  await db.end();
  process.send?.(r);
}

async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? '8');
  const writers = Number(process.argv[3] ?? '3');
  const outstanding = Number(process.argv[4] ?? '256');
  if (!existsSync(join(PGBIN, 'initdb')) || process.getuid?.() !== 0) {
    process.stdout.write(
      JSON.stringify({ settlesPerSec: null, error: 'needs root and PostgreSQL 15 binaries' }) + '\n',
    );
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'svc-pgbench-'));
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString());
  chownSync(dir, uid, Number(execFileSync('id', ['-g', 'postgres']).toString()));
  const port = await freePort();
  const url = `postgres://postgres@127.0.0.1:${port}/svc`;
  try {
    asPg(`${PGBIN}/initdb -D ${dir}/data -U postgres --auth=trust -E UTF8 >${dir}/initdb.log 2>&1`);
    const o = `-c listen_addresses=127.0.0.1 -p ${port} -c unix_socket_directories=${dir} -c fsync=on -c synchronous_commit=on`;
    asPg(`${PGBIN}/pg_ctl -D ${dir}/data -l ${dir}/pg.log -w -o '${o}' start >/dev/null`);
    execFileSync(`${PGBIN}/psql`, [
      '-h',
      '127.0.0.1',
      '-p',
      String(port),
      '-U',
      'postgres',
      '-qc',
      'CREATE DATABASE svc',
    ]);
    const postmaster = Number(readFileSync(`${dir}/data/postmaster.pid`, 'utf8').split('\n')[0]);
    const h = openPostgres(url, { max: 1 });
    await migrateToLatest(h.db);
    await h.close();
    const db = new Pg(url, { max: 1 });
    const now = Date.now();
    await db.pipeline([
      sql`INSERT INTO orgs (id, name, origin, created_at) VALUES ('org_bench_c', 'c', 'admin', ${now}), ('org_bench_p', 'p', 'admin', ${now})`,
      sql`INSERT INTO api_keys (id, org_id, name, key_hash, start, scopes, origin, created_at, updated_at)
          VALUES ('key_bench', 'org_bench_c', 'k', 'hash_bench', 'svc_live_b', 'proxy:call', 'admin', ${now}, ${now})`,
      sql`INSERT INTO balances (org_id, credit_cents, updated_at) VALUES ('org_bench_c', ${CREDIT}, ${now}), ('org_bench_p', 0, ${now})`,
      sql`INSERT INTO ledger_entries (id, org_id, kind, status, amount_cents, idempotency_key, created_at)
          VALUES ('txn_bench', 'org_bench_c', 'purchase', 'settled', ${CREDIT}, 'bench:seed', ${now})`,
    ]);
    const tick = Number(execFileSync('getconf', ['CLK_TCK']).toString());
    const pg0 = pgCpuTicks(postmaster);
    const self = fileURLToPath(import.meta.url);
    const results = await Promise.all(
      Array.from(
        { length: writers },
        () =>
          new Promise<WriterResult>((resolve, reject) => {
            const c = fork(self, ['--writer', url, String(seconds), String(outstanding)]);
            c.once('message', (m) => resolve(m as WriterResult));
            c.once('exit', (code) => code !== 0 && reject(new Error(`writer exited ${code}`)));
          }),
      ),
    );
    const pgCpuSec = (pgCpuTicks(postmaster) - pg0) / tick;
    const settles = results.reduce((a, r) => a + r.settles, 0);
    const batches = results.reduce((a, r) => a + r.batches, 0);
    const secs = Math.max(...results.map((r) => r.seconds));
    const writerCpuUs = results.reduce((a, r) => a + r.cpuUs, 0);
    const [b] = await db.rows<{ credit: number; ledger: number; usage: number }>(sql`
      SELECT ((SELECT credit_cents FROM balances WHERE org_id = 'org_bench_c')
               - (SELECT COALESCE(sum(unfolded_cents), 0) FROM balance_leases WHERE org_id = 'org_bench_c' AND released_at IS NULL))::bigint AS credit,
             (SELECT sum(amount_cents) FROM ledger_entries WHERE org_id = 'org_bench_c')::bigint AS ledger,
             (SELECT count(*) FROM usage_calls) AS usage`);
    await db.end();
    process.stdout.write(
      JSON.stringify({
        writers,
        outstanding,
        seconds: Math.round(secs * 10) / 10,
        settlesPerSec: Math.round(settles / secs),
        avgBatch: Math.round((settles / batches) * 10) / 10,
        writerCpuUsPerSettle: Math.round((writerCpuUs / settles) * 10) / 10,
        pgCpuUsPerSettle: Math.round(((pgCpuSec * 1e6) / settles) * 10) / 10,
        commitP50Ms: Math.round(Math.max(...results.map((r) => r.p50Ms)) * 100) / 100,
        commitP99Ms: Math.round(Math.max(...results.map((r) => r.p99Ms)) * 100) / 100,
        books: { credit: b!.credit, ledger: b!.ledger, usageRows: b!.usage, settles },
        consistent: b!.credit === b!.ledger && b!.usage === settles && b!.ledger === CREDIT - settles,
      }) + '\n',
    );
  } finally {
    try {
      asPg(`${PGBIN}/pg_ctl -D ${dir}/data -m immediate -w stop >/dev/null`);
    } catch {
      // not started
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--writer') {
  const [url, seconds, outstanding] = process.argv.slice(3);
  void writer(url!, 'org_bench_c', 'key_bench', Number(seconds), Number(outstanding));
} else void main();
