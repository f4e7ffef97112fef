/**
 * `npm run bench`: the gateway vs nginx vs the upstream direct in one bounded run (issue 3, item 7).
 * Starts everything pinned, checks one request per target, interleaves load rounds, measures added latency
 * on one core, runs the micro-benchmarks, and writes bench/results/<stamp>.json|md (+ bench/RESULTS.md).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseOptions, type BenchOptions } from './options.js';
import { ensureTool } from './tools.js';
import { startPinned, type Pinned } from './procs.js';
import { startNginx } from './nginx.js';
import { startHaproxy } from './haproxy.js';
import { ROOT, seedDataDir, startGateway, startStub, unknownKey, type Seeded } from './setup.js';
import { checkTarget, type CheckResult, SPIN_FLOOR_US, type Target, type TargetId, TARGET_LABELS } from './targets.js';
import { runThroughput, type LoadRun } from './phase-throughput.js';
import { repin, runLatency, type LatencyRun } from './phase-latency.js';
import { runMicro, type MicroResults } from './phase-micro.js';
import { runMcpPhase, type McpPhase } from './phase-mcp.js';
import { paidCallsPerCommit, summarise, type Summary } from './summary.js';
import { machineInfo, type Machine } from './stats.js';
import { renderMarkdown, withKeptNotes } from './report.js';
import { profilePaid, type ProfileLine } from './profile.js';
import { checkIntegrity, settleCountsOf, type Integrity } from './integrity.js';
import { eldDelay, eldSnapshot } from './eld.js';
import { postgresAvailable, startPostgres, type PgCluster } from '../test/helpers/postgres.js';

export interface BenchResult {
  file: string;
  startedAt: string;
  finishedAt: string;
  argv: string[];
  options: BenchOptions;
  machine: Machine;
  loadavgStart: string;
  checks: Partial<Record<TargetId, CheckResult>>;
  load: LoadRun[];
  latency: LatencyRun[];
  micro: MicroResults;
  /** MCP call_api against the bare relay floor (bench/phase-mcp.ts); null when skipped. */
  mcp: McpPhase | null;
  /** Self-time profile of the paid path (a separate, unmeasured run). */
  profile: ProfileLine[];
  /** Loop delay of the idle Node process before any load (all servers idle): this machine's floor, in ms beyond the interval. */
  eldFloor: { p99Ms: number; p999Ms: number; maxMs: number } | null;
  /**
   * Loop delay below saturation: the gateways (pass-through, paid) at a fixed total rate, rounds interleaved. At
   * saturation the delay is the length of a loop turn draining every connection; this shows what remains.
   */
  fixedRate: { rate: number; connections: number; runs: LoadRun[] } | null;
  /** Money check on the paid gateway's database after it stopped. */
  integrity: Integrity | null;
  summary: Summary;
  notes: string[];
}

const SUT_CPU = '1';
/** The fixed-rate loop-delay runs: about a third of the paid path's capacity here, over 10 connections. */
const FIXED_RATE = 2000;
const FIXED_RATE_CONNECTIONS = 10;
const LOAD_CPU = '0';
const log = (s: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${s}\n`);

async function _main(): Promise<void> {
  const argv = process.argv.slice(2);
  const o = parseOptions(argv);
  const startedAt = new Date().toISOString();
  const loadavgStart = machineInfo().loadavg;
  const notes: string[] = [];
  const procs: Pinned[] = [];
  const tmp = mkdtempSync(join(tmpdir(), 'svc-bench-'));
  const seeds: Seeded[] = [];
  let pgCluster: PgCluster | undefined;
  const stopAll = async () => {
    await Promise.all(procs.splice(0).map((p) => p.stop()));
    await pgCluster?.stop().catch(() => {});
    pgCluster = undefined;
  };
  process.once('SIGINT', () => void stopAll().then(() => process.exit(130)));
  const checks: BenchResult['checks'] = {};
  let load: LoadRun[] = [];
  let latency: LatencyRun[] = [];
  let micro: MicroResults = {};
  let mcp: McpPhase | null = null;
  let profile: ProfileLine[] = [];
  let integrity: Integrity | null = null;
  let eldFloor: BenchResult['eldFloor'] = null;
  let fixedRate: BenchResult['fixedRate'] = null;
  try {
    const nginx = ensureTool('nginx', 'nginx-light', log);
    const haproxy = ensureTool('haproxy', 'haproxy', log);
    const wrk = ensureTool('wrk', 'wrk', log);
    if (nginx.note) notes.push(`nginx target skipped: ${nginx.note}`);
    if (haproxy.note) notes.push(`HAProxy target skipped: ${haproxy.note}`);
    if (!wrk.path) notes.push('saturation runs use autocannon (wrk missing): the load core may bound nginx');
    if (wrk.note) notes.push(`added-latency phase skipped (needs wrk): ${wrk.note}`);

    const stub = await startStub(LOAD_CPU);
    procs.push(stub);
    log(`stub upstream ${stub.url} (pid ${stub.pid}, cpu ${LOAD_CPU})`);
    const targets: Target[] = [
      {
        id: 'direct',
        label: TARGET_LABELS.direct,
        url: `${stub.url}/items/42`,
        headers: {},
        sut: stub,
        expectStatus: 200,
        eld: false,
      },
    ];
    if (nginx.path) {
      const ng = await startNginx(nginx.path, join(tmp, 'nginx'), SUT_CPU, stub.port);
      procs.push(ng);
      log(`nginx ${ng.url} (pid ${ng.pid}, cpu ${SUT_CPU})`);
      targets.push({
        id: 'nginx',
        label: TARGET_LABELS.nginx,
        url: `${ng.url}/items/42`,
        headers: {},
        sut: ng,
        expectStatus: 200,
        eld: false,
      });
    }
    let paidSeed: Seeded | null = null;
    if (!existsSync(join(ROOT, 'dist', 'gateway', 'main.js'))) {
      notes.push('gateway targets skipped: dist/gateway/main.js does not exist (gateway not built yet)');
    } else {
      const eldDir = join(tmp, 'eld');
      mkdirSync(eldDir);
      const nodeOptions = `--import=${pathToFileURL(join(ROOT, 'dist', 'bench', 'eld-probe.js')).href}`;
      // One key drives all the load: lift the per-key default rate limit (60k/min) so the bench measures the gateway, not the limiter.
      const env = { BENCH_ELD_DIR: eldDir, SVC_GATEWAY_DEFAULT_RATE_PER_MIN: '1000000000' };
      try {
        const passSeed = await seedDataDir(stub.url, 'pass');
        paidSeed = await seedDataDir(stub.url, 'paid');
        seeds.push(passSeed, paidSeed);
        const pass = await startGateway(passSeed, 'gateway-pass', { metering: false, cpus: SUT_CPU, nodeOptions, env });
        procs.push(pass);
        const paid = await startGateway(paidSeed, 'gateway-paid', { metering: true, cpus: SUT_CPU, nodeOptions, env });
        procs.push(paid);
        // The same paid path on the JavaScript fallback server (what Node 22+ gets without a native uWS build).
        const fallbackSeed = await seedDataDir(stub.url, 'paid-fallback');
        seeds.push(fallbackSeed);
        const fallback = await startGateway(fallbackSeed, 'gateway-paid-fallback', {
          metering: true,
          cpus: SUT_CPU,
          nodeOptions,
          env: { ...env, SVC_GATEWAY_SERVER: 'fallback' },
        });
        procs.push(fallback);
        // The same paid path on PostgreSQL (issue 27): a throwaway local PostgreSQL 15 (test/helpers/postgres.ts).
        if (postgresAvailable()) {
          pgCluster = await startPostgres();
          const pgSeed = await seedDataDir(stub.url, 'paid-pg', await pgCluster.createDatabase('bench'));
          seeds.push(pgSeed);
          const pgUrl = pgCluster.url('bench');
          const paidPg = await startGateway(pgSeed, 'gateway-paid-pg', {
            metering: true,
            cpus: SUT_CPU,
            nodeOptions,
            env: { ...env, SVC_DATABASE_URL: pgUrl },
          });
          procs.push(paidPg);
          targets.push({
            id: 'paid-pg',
            label: TARGET_LABELS['paid-pg'],
            url: paidPg.url + pgSeed.path,
            headers: { authorization: `Bearer ${pgSeed.key}` },
            sut: paidPg,
            expectStatus: 200,
            eld: true,
            ...(pgCluster.serverPid() !== null
              ? { backing: { pid: pgCluster.serverPid()!, label: 'PostgreSQL server (postmaster and backends)' } }
              : {}),
          });
        } else notes.push('paid-pg skipped: PostgreSQL 15 binaries not found (Debian postgresql-15)');
        log(`gateway pass-through ${pass.url} (pid ${pass.pid}), paid ${paid.url} (pid ${paid.pid}), cpu ${SUT_CPU}`);
        const auth = (k: string) => ({ authorization: `Bearer ${k}` });
        targets.push(
          {
            id: 'passthrough',
            label: TARGET_LABELS.passthrough,
            url: pass.url + passSeed.path,
            headers: auth(passSeed.key),
            sut: pass,
            expectStatus: 200,
            eld: true,
          },
          {
            id: 'paid',
            label: TARGET_LABELS.paid,
            url: paid.url + paidSeed.path,
            headers: auth(paidSeed.key),
            sut: paid,
            expectStatus: 200,
            eld: true,
            settleCounts: settleCountsOf(paidSeed),
          },
          {
            id: 'paid-fallback',
            label: TARGET_LABELS['paid-fallback'],
            url: fallback.url + fallbackSeed.path,
            headers: auth(fallbackSeed.key),
            sut: fallback,
            expectStatus: 200,
            eld: true,
          },
          {
            id: 'unauth',
            label: TARGET_LABELS.unauth,
            url: paid.url + paidSeed.path,
            headers: auth(unknownKey()),
            sut: paid,
            expectStatus: 401,
            eld: true,
          },
        );
      } catch (e) {
        notes.push(`gateway targets skipped: ${(e as Error).message.split('\n').slice(0, 3).join(' ')}`);
      }
    }
    const fastify = await startPinned(
      'fastify-http-proxy',
      SUT_CPU,
      process.execPath,
      [join(ROOT, 'dist', 'bench', 'fastify-proxy.js')],
      { PATH: process.env.PATH ?? '', BENCH_UPSTREAM: stub.url },
    );
    procs.push(fastify);
    log(`@fastify/http-proxy ${fastify.url} (pid ${fastify.pid}, cpu ${SUT_CPU})`);
    targets.push({
      id: 'fastify',
      label: TARGET_LABELS.fastify,
      url: `${fastify.url}/items/42`,
      headers: {},
      sut: fastify,
      expectStatus: 200,
      eld: false,
    });
    // The commit floor: measured in the added-latency phase only (issue 28's target is the paid path's added p99
    // against it), so it costs no throughput rounds.
    const floor = await startPinned(
      'commit-floor',
      SUT_CPU,
      process.execPath,
      [join(ROOT, 'dist', 'bench', 'commit-floor.js')],
      { PATH: process.env.PATH ?? '', BENCH_FLOOR_DB: join(tmp, 'commit-floor', 'floor.sqlite') },
    );
    procs.push(floor);
    log(`commit floor ${floor.url} (pid ${floor.pid}, cpu ${SUT_CPU})`);
    targets.push({
      id: 'commit-floor',
      label: TARGET_LABELS['commit-floor'],
      url: `${floor.url}/items/42`,
      headers: {},
      sut: floor,
      expectStatus: 200,
      eld: false,
    });
    // The relay floors (issue 28's CPU targets): the least a Node + uWS relay costs per call, without and with a
    // committed row per call; the same key header as the paid path (the metered floor hashes it). The spin floor
    // weighs a µs of a server's own code at saturation (bench/relay-floor.ts).
    for (const id of ['relay-floor', 'metered-floor', 'spin-floor'] as const) {
      const relay = await startPinned(id, SUT_CPU, process.execPath, [join(ROOT, 'dist', 'bench', 'relay-floor.js')], {
        PATH: process.env.PATH ?? '',
        BENCH_UPSTREAM: stub.url,
        ...(id === 'metered-floor' ? { BENCH_RELAY_COMMIT: join(tmp, 'metered-floor', 'floor.sqlite') } : {}),
        ...(id === 'spin-floor' ? { BENCH_RELAY_SPIN_US: String(SPIN_FLOOR_US) } : {}),
      });
      procs.push(relay);
      log(`${id} ${relay.url} (pid ${relay.pid}, cpu ${SUT_CPU})`);
      targets.push({
        id,
        label: TARGET_LABELS[id],
        url: `${relay.url}/items/42`,
        headers: { authorization: `Bearer ${paidSeed?.key ?? unknownKey()}` },
        sut: relay,
        expectStatus: 200,
        eld: false,
      });
    }
    if (haproxy.path) {
      // The same key and header as the paid path: HAProxy checks it against its map, rate-limits it, strips it.
      const key = paidSeed?.key ?? unknownKey();
      const hp = await startHaproxy(haproxy.path, join(tmp, 'haproxy'), SUT_CPU, stub.port, [
        { key, orgId: paidSeed?.orgId ?? 'org_bench' },
      ]);
      procs.push(hp);
      log(`haproxy ${hp.url} (pid ${hp.pid}, cpu ${SUT_CPU})`);
      targets.push({
        id: 'haproxy',
        label: TARGET_LABELS.haproxy,
        url: `${hp.url}/items/42`,
        headers: { authorization: `Bearer ${key}` },
        sut: hp,
        expectStatus: 200,
        eld: false,
      });
    }
    let idlePid: number | null = null;
    if (targets.some((t) => t.eld)) {
      const nodeOptions = `--import=${pathToFileURL(join(ROOT, 'dist', 'bench', 'eld-probe.js')).href}`;
      const idle = await startPinned(
        'idle-node',
        SUT_CPU,
        process.execPath,
        [join(ROOT, 'dist', 'bench', 'idle-node.js')],
        { PATH: process.env.PATH ?? '', NODE_OPTIONS: nodeOptions, BENCH_ELD_DIR: join(tmp, 'eld') },
      );
      procs.push(idle);
      idlePid = idle.pid;
    }
    const measured: Target[] = [];
    for (const t of targets) {
      const c = await checkTarget(t, paidSeed);
      checks[t.id] = c;
      log(`check ${t.id}: ${c.ok ? 'ok' : 'FAILED'}: ${c.detail}`);
      if (c.ok) measured.push(t);
      else notes.push(`${t.label} not measured: its check failed (${c.detail})`);
    }
    if (!o.skipLoad && idlePid !== null) {
      // The machine's own floor: the idle process's loop delay while nothing runs (VM timer and wake-up latency).
      await eldSnapshot(join(tmp, 'eld'), idlePid);
      await new Promise((r) => setTimeout(r, 5000));
      const s = await eldSnapshot(join(tmp, 'eld'), idlePid);
      const ms = (v: number) => Math.round(eldDelay(v) * 100) / 100;
      if (s) eldFloor = { p99Ms: ms(s.p99Ms), p999Ms: ms(s.p999Ms), maxMs: ms(s.maxMs) };
      log(
        `loop delay floor (idle Node, idle machine, 5 s): p99 ${eldFloor?.p99Ms} ms, p99.9 ${eldFloor?.p999Ms} ms, max ${eldFloor?.maxMs} ms`,
      );
    }
    if (!o.skipLoad) {
      load = await runThroughput(
        measured.filter((t) => t.id !== 'commit-floor'),
        {
          rounds: o.rounds,
          durationSec: o.durationSec,
          connections: o.connections,
          eldDir: join(tmp, 'eld'),
          idlePid,
          wrk: wrk.path,
        },
        log,
      );
      const gateways = measured.filter((t) => t.id === 'passthrough' || t.id === 'paid');
      if (gateways.length) {
        const rate = FIXED_RATE;
        const runs = await runThroughput(
          gateways,
          {
            rounds: Math.min(o.rounds, 3),
            durationSec: o.durationSec,
            connections: FIXED_RATE_CONNECTIONS,
            eldDir: join(tmp, 'eld'),
            idlePid,
            rate,
          },
          log,
        );
        fixedRate = { rate, connections: FIXED_RATE_CONNECTIONS, runs };
      }
      if (wrk.path) {
        const latTargets = measured.filter((t) => t.id !== 'unauth' && t.id !== 'relay-floor' && t.id !== 'spin-floor');
        repin(
          procs.filter((p) => p.pid !== idlePid).map((p) => p.pid),
          LOAD_CPU,
        );
        latency = await runLatency(
          wrk.path,
          latTargets,
          { rounds: o.latencyRounds, seconds: o.latencySec, cpus: LOAD_CPU, eldDir: join(tmp, 'eld') },
          log,
        );
      }
    }
    if (o.profile && checks.paid?.ok) {
      try {
        profile = await profilePaid({
          stubUrl: stub.url,
          dir: join(tmp, 'prof'),
          connections: o.connections,
          cpus: SUT_CPU,
          seeds,
        });
        log(
          `profile of the paid path: ${profile
            .slice(0, 5)
            .map((l) => `${l.percent}% ${l.fn}`)
            .join(', ')}`,
        );
      } catch (e) {
        notes.push(`profile run failed: ${(e as Error).message.split('\n')[0]}`);
      }
    }
    await stopAll();
    if (paidSeed && checks.paid?.ok) {
      const paidRuns = load.filter((r) => r.target === 'paid');
      const fixedPaid = fixedRate?.runs.filter((r) => r.target === 'paid') ?? [];
      const clientOk =
        2 +
        [...paidRuns, ...fixedPaid].reduce((n, r) => n + r.expected, 0) +
        latency.filter((r) => r.target === 'paid').reduce((n, r) => n + r.wrk.requests - r.wrk.statusErrors, 0);
      const inFlightAtCutoffs =
        paidRuns.length * o.connections +
        fixedPaid.length * FIXED_RATE_CONNECTIONS +
        latency.filter((r) => r.target === 'paid').length;
      integrity = await checkIntegrity(paidSeed, clientOk, inFlightAtCutoffs);
      log(`integrity of the paid path: ${integrity.ok ? 'ok' : 'FAILED'}: ${integrity.detail}`);
    }
    if (!o.skipMicro)
      micro = await runMicro(
        {
          authOps: o.authOps,
          ledgerSec: o.ledgerSec,
          sweep: !o.quick,
          cpus: SUT_CPU,
          // The settle writer alone at the batch the paid runs committed: the commit's share of metering.
          paidBatch: paidCallsPerCommit(load),
        },
        log,
      );
    if (!o.skipMcp) {
      mcp = await runMcpPhase(o.mcpSec, tmp, log);
      if (mcp.error) notes.push(`MCP phase: ${mcp.error}`);
      else
        log(
          `MCP call_api CPU / relay floor: ${mcp.cpuOverFloor.stateless} (stateless), ${mcp.cpuOverFloor.session} (session); ` +
            `/ undici relay: ${mcp.cpuOverUndiciFloor?.stateless} (stateless), ${mcp.cpuOverUndiciFloor?.session} (session)`,
        );
    }
  } catch (e) {
    // Keep whatever was measured: the report says where the run stopped.
    notes.push(`run stopped early: ${(e as Error).message.split('\n').slice(0, 2).join(' ')}`);
    log(`ERROR ${(e as Error).stack ?? String(e)}`);
  } finally {
    await stopAll();
    for (const s of seeds) rmSync(s.dataDir, { recursive: true, force: true });
    rmSync(tmp, { recursive: true, force: true });
  }
  _write({
    startedAt,
    argv,
    options: o,
    loadavgStart,
    checks,
    load,
    latency,
    micro,
    mcp,
    profile,
    eldFloor,
    fixedRate,
    integrity,
    notes,
  });
}

type RunData = Omit<BenchResult, 'file' | 'finishedAt' | 'machine' | 'summary'>;

function _write(p: RunData): void {
  const stamp = p.startedAt.slice(0, 16).replace(/:/g, '') + 'Z' + (p.options.quick ? '-quick' : '');
  const dir = join(ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const result: BenchResult = {
    file: `${stamp}.json`,
    ...p,
    finishedAt: new Date().toISOString(),
    machine: machineInfo(),
    summary: summarise(p.load, p.latency, p.micro, p.eldFloor?.p999Ms ?? null, p.fixedRate, p.mcp),
  };
  writeFileSync(join(dir, result.file), JSON.stringify(result, null, 2) + '\n');
  const md = renderMarkdown(result);
  writeFileSync(join(dir, `${stamp}.md`), md);
  if (p.options.record) {
    const resultsPath = join(ROOT, 'bench', 'RESULTS.md');
    writeFileSync(resultsPath, withKeptNotes(md, resultsPath));
  }
  process.stdout.write(md + '\n');
  log(`wrote bench/results/${stamp}.json and .md${p.options.record ? ' and bench/RESULTS.md' : ''}`);
}

void _main().catch((e: unknown) => {
  log(`FAILED: ${(e as Error).stack ?? String(e)}`);
  process.exit(1);
});
