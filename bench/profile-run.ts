/**
 * `node dist/bench/profile-run.js [paid|paid-pg|passthrough|relay|nginx] [--seconds N] [--c1] [--strace] [--env K=V]... [--tmpfs]
 * [--helpers-on-core0]`: one gateway on core 1, the
 * stub and wrk on core 0, then the gateway's CPU per request and either its top self-time functions (`--cpu-prof`)
 * or, with `--strace`, its system calls per request (`strace -c -f`, every thread: the checkpoint thread's WAL
 * reads and fsyncs included). `--c1`: one connection (each paid call its own commit), else `wrk -t2 -c50`.
 * For comparing variants of the hot path between builds without a full `npm run bench` (issue 14). `nginx` measures
 * nginx in the gateway's place (CPU per request only), the reference for the CPU ratios in the same run; `relay` the
 * bare relay floor (bench/relay-floor.ts, profiled like the gateway), what pass-through is judged against.
 * `--env K=V`: a gateway setting to compare. `--tmpfs`: the database on /dev/shm, so no write reaches a disk (what the
 * kernel's I/O path adds to the tail). `--helpers-on-core0`: every gateway thread but the main one (the checkpoint
 * thread, libuv's pool) moved to core 0 after warm-up (what sharing core 1 with them adds). Both only diagnose.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { topSelfTime } from './profile.js';
import { cpuMicros, startPinned } from './procs.js';
import { runWrk } from './phase-latency.js';
import { ROOT, seedDataDir, startGateway, startStub } from './setup.js';
import { startNginx } from './nginx.js';
import { startPostgres, type PgCluster } from '../test/helpers/postgres.js';

/** `strace -c` summary rows as calls per request, largest first. */
function _perRequest(summary: string, requests: number): string[] {
  const rows: [string, number][] = [];
  for (const line of summary.split('\n')) {
    const m = /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$/.exec(line);
    if (m && m[2] !== 'total') rows.push([m[2]!, Number(m[1]) / requests]);
  }
  return rows.sort((a, b) => b[1] - a[1]).map(([name, n]) => `${n.toFixed(2).padStart(7)}  ${name}`);
}

async function _main(): Promise<void> {
  const argv = process.argv.slice(2);
  const mode = (['passthrough', 'relay', 'nginx', 'paid-pg'] as const).find((m) => argv.includes(m)) ?? 'paid';
  const i = argv.indexOf('--seconds');
  const seconds = i >= 0 ? Number(argv[i + 1]) : 5;
  const strace = argv.includes('--strace');
  const load = argv.includes('--c1') ? { threads: 1, connections: 1 } : { threads: 2, connections: 50 };
  // `--env K=V` (repeatable): gateway settings to compare, e.g. SVC_GATEWAY_CHECKPOINT_MS=0.
  const extraEnv: Record<string, string> = {};
  argv.forEach((a, j) => {
    const kv = a === '--env' ? argv[j + 1] : undefined;
    if (kv?.includes('=')) extraEnv[kv.slice(0, kv.indexOf('='))] = kv.slice(kv.indexOf('=') + 1);
  });
  // seedDataDir makes its directory under os.tmpdir(), which reads TMPDIR on each call.
  if (argv.includes('--tmpfs')) process.env.TMPDIR = '/dev/shm';
  const dir = mkdtempSync(join(tmpdir(), 'svc-prof-'));
  const stub = await startStub('0');
  // `paid-pg`: the paid path on a throwaway PostgreSQL cluster (as the bench's `paid-pg` row).
  const cluster: PgCluster | undefined = mode === 'paid-pg' ? await startPostgres() : undefined;
  const seed = await seedDataDir(stub.url, 'prof', cluster ? await cluster.createDatabase('prof') : undefined);
  if (cluster) extraEnv.SVC_DATABASE_URL = cluster.url('prof');
  const gw =
    mode === 'nginx'
      ? await startNginx('nginx', join(dir, 'nginx'), '1', stub.port)
      : mode === 'relay'
        ? await startPinned(
            'relay-floor',
            '1',
            process.execPath,
            [...(strace ? [] : ['--cpu-prof', `--cpu-prof-dir=${dir}`]), join(ROOT, 'dist', 'bench', 'relay-floor.js')],
            { PATH: process.env.PATH ?? '', BENCH_UPSTREAM: stub.url },
          )
        : await startGateway(seed, 'gateway-prof', {
            metering: mode !== 'passthrough',
            cpus: '1',
            nodeArgs: strace ? [] : ['--cpu-prof', `--cpu-prof-dir=${dir}`],
            env: { SVC_GATEWAY_DEFAULT_RATE_PER_MIN: '1000000000', ...extraEnv },
          });
  const target: { url: string; headers: Record<string, string> } =
    mode === 'nginx' || mode === 'relay'
      ? { url: `${gw.url}/items/42`, headers: {} }
      : { url: gw.url + seed.path, headers: { authorization: `Bearer ${seed.key}` } };
  const out = join(dir, 'strace.txt');
  try {
    await runWrk('wrk', target, 2, '0', load);
    if (argv.includes('--helpers-on-core0') && mode !== 'nginx')
      for (const tid of readdirSync(`/proc/${gw.pid}/task`))
        if (Number(tid) !== gw.pid) execFileSync('taskset', ['-p', '-c', '0', tid], { stdio: 'ignore' });
    const tracer = strace ? spawn('strace', ['-c', '-f', '-o', out, '-p', String(gw.pid)]) : null;
    if (tracer) await new Promise((r) => setTimeout(r, 500));
    const c0 = cpuMicros(gw.pid);
    const w = await runWrk('wrk', target, seconds, '0', load);
    const c1 = cpuMicros(gw.pid);
    if (tracer) {
      tracer.kill('SIGINT');
      await new Promise((r) => tracer.once('exit', r));
    }
    console.log(
      `${mode} (${load.connections} connection${load.connections > 1 ? 's' : ''}${strace ? ', under strace' : ''}): ` +
        `${Math.round(w.requests / (w.durationUs / 1e6))} req/s, ${((c1 - c0) / w.requests).toFixed(1)} µs CPU/req, ` +
        `p50 ${w.p50Us} µs, p99 ${w.p99Us} µs, non-2xx ${w.statusErrors}`,
    );
    if (tracer) {
      console.log('system calls per request:');
      for (const l of _perRequest(readFileSync(out, 'utf8'), w.requests)) console.log(l);
    }
  } finally {
    await gw.stop();
    await stub.stop();
    await cluster?.stop().catch(() => {});
  }
  if (!strace && mode !== 'nginx')
    for (const l of topSelfTime(dir, 30)) console.log(`${String(l.percent).padStart(5)}  ${l.fn}  ${l.where}`);
  if (process.env.BENCH_KEEP_PROFILE) console.log(`profile kept in ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
  rmSync(seed.dataDir, { recursive: true, force: true });
}

void _main();
