/**
 * Egress guard cost (issue 16): the same paid call through two gateways on one seeded data dir and one stub upstream,
 * guard on (SVC_ENV=production, SVC_EGRESS_ALLOW naming the stub's 127.0.0.1:port) against guard off (development),
 * in interleaved rounds (order alternating), to show the connect-time check costs nothing measurable per call: it runs
 * once per new upstream connection, and the connections the stub accepts during a run are counted to show how few.
 * Usage: `npm run bench:egress [-- --rounds 4 --duration 5 --connections 50 --warmup 2] [--control]` (`--control`: an
 * A/A run, both gateways with the guard off, for the noise floor of the ratio).
 * Writes bench/results/egress-<UTC stamp>.json; prints the markdown summary for bench/RESULTS.md on stdout.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LookupFunction } from 'node:net';
import { isAllowedHost, isNonPublicAddress, normalizeHost, publicOnlyLookup, egressPolicy } from '../core/egress.js';
import { openTestDb, seedListing } from '../test/helpers/db.js';
import { LOAD_CPU, runLoadWorker } from './phase-throughput.js';
import type { LoadResult } from './load-worker.js';
import { cpuBusy, cpuMicros, cpuSample, type Pinned } from './procs.js';
import { ROOT, seedDataDir, startGateway, startStub, type Seeded } from './setup.js';
import { machineInfo, median, round } from './stats.js';
import { checkTarget, TARGET_LABELS, type Target } from './targets.js';

/** The gateways under test share this core; autocannon and the stub sit on LOAD_CPU (as in `npm run bench`). */
const SUT_CPU = '1';
/** How often the stub's accepted sockets are sampled from /proc/net/tcp during a run. */
const SAMPLE_MS = 20;
/** A loopback port nothing listens on and SVC_EGRESS_ALLOW does not name: the guard must refuse it. */
const REFUSED_UPSTREAM = 'http://127.0.0.1:9';

type Side = 'guard_on' | 'guard_off';
const SIDES: Side[] = ['guard_on', 'guard_off'];

interface Options {
  rounds: number;
  durationSec: number;
  connections: number;
  /** Seconds of load per gateway before the rounds (JIT, pool, page cache), not counted. */
  warmupSec: number;
  /** A/A control: both gateways in development, to read the ratio two identical gateways show on this machine. */
  control: boolean;
}

function _options(argv: string[]): Options {
  const o: Options = { rounds: 4, durationSec: 5, connections: 50, warmupSec: 2, control: false };
  const flags: Record<string, 'rounds' | 'durationSec' | 'connections' | 'warmupSec'> = {
    '--rounds': 'rounds',
    '--duration': 'durationSec',
    '--connections': 'connections',
    '--warmup': 'warmupSec',
  };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--control') {
      o.control = true;
      continue;
    }
    const key = flags[argv[i]!];
    const v = Number(argv[i + 1]);
    if (!key || !Number.isInteger(v) || v <= 0)
      throw new Error(
        'usage: npm run bench:egress [-- --rounds N --duration S --connections C --warmup S] [--control]',
      );
    o[key] = v;
    i++;
  }
  return o;
}

/**
 * Sockets the stub accepted (local port = the stub's, not LISTEN), by inode, from /proc/net/tcp: the inodes first
 * seen during a run are the upstream connections opened in it. Sampled, so a connection opened and closed between
 * two samples would be missed; the gateway's pool keeps its connections alive, so none is that short.
 */
class UpstreamSockets {
  private readonly seen = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private opened = 0;
  private peak = 0;

  constructor(private readonly port: number) {
    this.sample();
  }

  private sample(): void {
    let open = 0;
    for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || f[3] === '0A') continue;
      if (Number.parseInt(f[1]!.split(':')[1]!, 16) !== this.port) continue;
      if (f[3] === '01') open++;
      const inode = f[9]!;
      if (inode === '0' || this.seen.has(inode)) continue; // TIME_WAIT sockets have no inode
      this.seen.add(inode);
      this.opened++;
    }
    this.peak = Math.max(this.peak, open);
  }

  start(): void {
    this.sample();
    this.opened = 0;
    this.peak = 0;
    this.timer = setInterval(() => this.sample(), SAMPLE_MS);
  }

  stop(): { opened: number; peakEstablished: number } {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.sample();
    return { opened: this.opened, peakEstablished: this.peak };
  }
}

interface Run {
  round: number;
  side: Side;
  load: LoadResult;
  /** 200s: every call of this bench is the paid call, answered 200. */
  ok: number;
  cpuUsPerReq: number | null;
  coreBusy: number[];
  upstreamConnectionsOpened: number;
  upstreamConnectionsPeak: number;
}

/** ns per op of `f`, median of 5 batches (after one warm-up batch). */
function _nsPerOp(f: (i: number) => unknown, ops = 200_000): number {
  const batches: number[] = [];
  let sink = 0;
  for (let b = 0; b < 6; b++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < ops; i++) if (f(i)) sink++;
    if (b > 0) batches.push(Number(process.hrtime.bigint() - t0) / ops);
  }
  if (sink < 0) console.log(sink); // keeps the loop's result alive
  return round(median(batches), 1)!;
}

/**
 * What the guard itself computes per new connection, in process (no sockets): the allow-list test that the guard-on
 * gateway takes here, the address test of an IP-literal upstream, and the filter a name's lookup answers go through
 * (over a resolver that answers at once, so the DNS query itself, paid with the guard off too, is left out).
 */
function _guardMicro(port: number): Record<string, number> {
  const policy = egressPolicy({ isProduction: true, egressAllow: [`127.0.0.1:${port}`] });
  const publicV4 = ['93.184.216.34', '151.101.1.69', '140.82.112.3', '104.16.132.229'];
  const publicV6 = ['2606:2800:220:1:248:1893:25c8:1946', '2a04:4e42::645', '2001:4860:4860::8888'];
  const answers = [
    { address: '93.184.216.34', family: 4 },
    { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
  ];
  const instant = ((_h: string, _o: unknown, cb: (e: null, a: typeof answers) => void) =>
    cb(null, answers)) as unknown as LookupFunction;
  const guarded = publicOnlyLookup(instant);
  let got = 0;
  const done = (e: NodeJS.ErrnoException | null) => {
    if (!e) got++;
  };
  const portText = String(port);
  const r = {
    allow_list_ns: _nsPerOp(() => isAllowedHost(policy, normalizeHost('127.0.0.1'), portText)),
    public_ipv4_ns: _nsPerOp((i) => isNonPublicAddress(publicV4[i & 3]!)),
    public_ipv6_ns: _nsPerOp((i) => isNonPublicAddress(publicV6[i % 3]!)),
    lookup_filter_ns: _nsPerOp(() => guarded('api.example.com', { family: 0 }, done)),
  };
  if (got === 0) throw new Error('guard micro: the lookup filter refused public answers');
  return r;
}

/** The guard-on gateway must refuse a loopback port SVC_EGRESS_ALLOW does not name; the guard-off one must not. */
async function _proveGuard(url: Record<Side, string>, seed: Seeded): Promise<Record<Side, string>> {
  const out = {} as Record<Side, string>;
  for (const side of SIDES) {
    const res = await fetch(`${url[side]}/bench-refused/items/1`, { headers: { authorization: `Bearer ${seed.key}` } });
    const body = (await res.json()) as { code?: string; detail?: string };
    const refused = /not a public address/.test(body.detail ?? '');
    out[side] = `${res.status} ${body.code}: ${body.detail}`;
    if (refused !== (side === 'guard_on'))
      throw new Error(`${side} gateway: the egress guard is ${refused ? 'on' : 'off'} (${out[side]})`);
  }
  return out;
}

const log = (s: string) => process.stderr.write(`[egress ${new Date().toISOString().slice(11, 19)}] ${s}\n`);

async function main(): Promise<void> {
  const o = _options(process.argv.slice(2));
  const startedAt = new Date().toISOString();
  const loadavgStart = machineInfo().loadavg;
  const procs: Pinned[] = [];
  let seed: Seeded | null = null;
  try {
    const stub = await startStub(LOAD_CPU);
    procs.push(stub);
    seed = await seedDataDir(stub.url, 'egress');
    const h = openTestDb(seed.dataDir);
    try {
      await seedListing(h, {
        orgId: seed.providerOrgId,
        slug: 'bench-refused',
        baseUrl: REFUSED_UPSTREAM,
        endpoints: [{ method: 'GET', path: '/items/{id}', priceCents: 1 }],
      });
    } finally {
      h.close();
    }
    // One key drives all the load: lift the per-key limit as `npm run bench` does. Production for the gateway alone
    // needs nothing more than the data dir (docs/operations.md: it reads SVC_DATA_DIR and SVC_GATEWAY_*).
    const common = { SVC_GATEWAY_DEFAULT_RATE_PER_MIN: '1000000000' };
    const env: Record<Side, Record<string, string>> = {
      guard_on: o.control
        ? { ...common, SVC_ENV: 'development' }
        : { ...common, SVC_ENV: 'production', SVC_EGRESS_ALLOW: `127.0.0.1:${stub.port}` },
      guard_off: { ...common, SVC_ENV: 'development' },
    };
    const gw = {} as Record<Side, Pinned>;
    for (const side of SIDES) {
      gw[side] = await startGateway(seed, `gateway-${side}`, { metering: true, cpus: SUT_CPU, env: env[side] });
      procs.push(gw[side]);
    }
    log(
      `stub ${stub.url} (cpu ${LOAD_CPU}); gateways guard on ${gw.guard_on.url}, off ${gw.guard_off.url} (cpu ${SUT_CPU})`,
    );

    const auth = { authorization: `Bearer ${seed.key}` };
    const target = (side: Side): Target => ({
      id: 'paid',
      label: `${TARGET_LABELS.paid}, ${side}`,
      url: gw[side].url + seed!.path,
      headers: auth,
      sut: gw[side],
      expectStatus: 200,
      eld: false,
    });
    const checks = {} as Record<Side, string>;
    for (const side of SIDES) {
      const c = await checkTarget(target(side), seed);
      if (!c.ok) throw new Error(`${side} check failed: ${c.detail}`);
      checks[side] = c.detail;
    }
    const guardProof = o.control
      ? { guard_on: 'control run: guard off on both sides', guard_off: '' }
      : await _proveGuard({ guard_on: gw.guard_on.url, guard_off: gw.guard_off.url }, seed);
    log(`checks passed; guard on refuses ${REFUSED_UPSTREAM}: ${guardProof.guard_on}`);

    const sockets = new UpstreamSockets(stub.port);
    const warmup = {} as Record<Side, { rps: number; upstreamConnectionsOpened: number }>;
    for (const side of SIDES) {
      const t = target(side);
      sockets.start();
      const load = await runLoadWorker({
        url: t.url,
        connections: o.connections,
        durationSec: o.warmupSec,
        headers: auth,
      });
      warmup[side] = { rps: Math.round(load.rps), upstreamConnectionsOpened: sockets.stop().opened };
    }
    log(`warm-up ${o.warmupSec} s each: ${JSON.stringify(warmup)}`);
    const runs: Run[] = [];
    for (let r = 1; r <= o.rounds; r++) {
      const order = r % 2 ? SIDES : [...SIDES].reverse();
      for (const side of order) {
        const t = target(side);
        const cpu0 = cpuMicros(t.sut.pid);
        const s0 = cpuSample();
        sockets.start();
        const load = await runLoadWorker({
          url: t.url,
          connections: o.connections,
          durationSec: o.durationSec,
          headers: t.headers,
        });
        const conns = sockets.stop();
        const s1 = cpuSample();
        const cpu1 = cpuMicros(t.sut.pid);
        const run: Run = {
          round: r,
          side,
          load,
          ok: load.statusCounts['200'] ?? 0,
          cpuUsPerReq: load.responses > 0 ? round((cpu1 - cpu0) / load.responses, 1) : null,
          coreBusy: cpuBusy(s0, s1),
          upstreamConnectionsOpened: conns.opened,
          upstreamConnectionsPeak: conns.peakEstablished,
        };
        runs.push(run);
        const bad = load.responses - run.ok + load.errors;
        log(
          `round ${r} ${side.padEnd(9)} ${Math.round(run.ok / load.durationSec)} req/s  p50 ${load.p50Ms} ms p99 ${load.p99Ms} ms  ` +
            `cpu ${run.cpuUsPerReq} µs/req  upstream connections opened ${conns.opened} (peak ${conns.peakEstablished})  ` +
            `cores ${run.coreBusy.map((b) => `${Math.round(b * 100)}%`).join('/')}` +
            (bad ? `  UNEXPECTED ${bad} (${JSON.stringify(load.statusCounts)} errors ${load.errors})` : ''),
        );
      }
    }
    const micro = _guardMicro(stub.port);
    const result = _summarise(o, runs, micro, {
      startedAt,
      finishedAt: new Date().toISOString(),
      loadavgStart,
      checks,
      guardProof,
      warmup,
    });
    const dir = join(ROOT, 'bench', 'results');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `egress-${o.control ? 'control-' : ''}${startedAt.replace(/[-:]/g, '').slice(0, 13)}Z.json`);
    writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(_markdown(result, `bench/results/${file.split('/').pop()}`));
    log(`wrote ${file}`);
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
    if (seed) rmSync(seed.dataDir, { recursive: true, force: true });
  }
}

function _summarise(
  o: Options,
  runs: Run[],
  micro: Record<string, number>,
  meta: {
    startedAt: string;
    finishedAt: string;
    loadavgStart: string;
    checks: Record<Side, string>;
    guardProof: Record<Side, string>;
    warmup: Record<Side, { rps: number; upstreamConnectionsOpened: number }>;
  },
) {
  const of = (side: Side) => runs.filter((r) => r.side === side);
  const rps = (r: Run) => r.ok / r.load.durationSec;
  const perSide = Object.fromEntries(
    SIDES.map((side) => {
      const rs = of(side);
      return [
        side,
        {
          rps: round(median(rs.map(rps))),
          p50Ms: median(rs.map((r) => r.load.p50Ms)),
          p99Ms: median(rs.map((r) => r.load.p99Ms)),
          cpuUsPerReq: round(median(rs.map((r) => r.cpuUsPerReq ?? Number.NaN)), 1),
          calls: rs.reduce((s, r) => s + r.ok, 0),
          upstreamConnectionsOpened: rs.reduce((s, r) => s + r.upstreamConnectionsOpened, 0),
        },
      ];
    }),
  ) as Record<
    Side,
    { rps: number; p50Ms: number; p99Ms: number; cpuUsPerReq: number; calls: number; upstreamConnectionsOpened: number }
  >;
  const rounds = [...new Set(runs.map((r) => r.round))].map((round_) => {
    const on = runs.find((r) => r.round === round_ && r.side === 'guard_on')!;
    const off = runs.find((r) => r.round === round_ && r.side === 'guard_off')!;
    return {
      round: round_,
      rpsRatio: round(rps(on) / rps(off), 3),
      cpuRatio: on.cpuUsPerReq && off.cpuUsPerReq ? round(on.cpuUsPerReq / off.cpuUsPerReq, 3) : null,
    };
  });
  const on = perSide.guard_on;
  // Upper bound of what the guard's own computation adds per call with the guard on: its costliest per-connection
  // path here, times the connections opened, spread over the calls they carried.
  const worstNs = Math.max(...Object.values(micro));
  return {
    bench: 'egress-cost',
    ...meta,
    options: o,
    machine: machineInfo(),
    pinning: { loadAndStub: LOAD_CPU, gateways: SUT_CPU },
    perSide,
    rounds,
    medianRpsRatio: round(median(rounds.map((r) => r.rpsRatio ?? Number.NaN)), 3),
    medianCpuRatio: round(median(rounds.map((r) => r.cpuRatio ?? Number.NaN)), 3),
    guardMicroNs: micro,
    guardNsPerCallBound: on.calls > 0 ? round((worstNs * on.upstreamConnectionsOpened) / on.calls, 2) : null,
    runs,
  };
}

function _markdown(r: ReturnType<typeof _summarise>, file: string): string {
  const L: string[] = [
    `## Egress guard cost (issue 16)${r.options.control ? ': A/A control, guard off on both sides' : ''}`,
    '',
    `Run: ${r.startedAt} → ${r.finishedAt}, \`npm run bench:egress\`. Machine: ${r.machine.nproc} CPUs shared with the other engineers' work (load average at start ${r.loadavgStart}), Node ${r.machine.node}.`,
    '',
    `Method: the full paid call through two gateways on the same seeded data dir and stub upstream, both pinned to core ${SUT_CPU} (autocannon and the stub on core ${LOAD_CPU}): guard on (\`SVC_ENV=production\`, \`SVC_EGRESS_ALLOW=127.0.0.1:<stub port>\`) and guard off (\`SVC_ENV=development\`). ${r.options.rounds} interleaved rounds (order alternating), ${r.options.durationSec} s each, ${r.options.connections} connections, after ${r.options.warmupSec} s of unmeasured warm-up per gateway. Before measuring, each gateway passed the paid-call check and the guard-on one refused a loopback port not in the allow list (\`${r.guardProof.guard_on}\`). Upstream connections opened: sockets the stub accepted during each run (new inodes in /proc/net/tcp, sampled every ${SAMPLE_MS} ms).`,
    '',
    '| side | req/s (median) | p50 ms | p99 ms | CPU µs/req | paid calls (all rounds) | upstream connections opened (all rounds) |',
    '|---|---|---|---|---|---|---|',
    ...SIDES.map((s) => {
      const p = r.perSide[s];
      const label = r.options.control
        ? `${s} (development, control)`
        : s === 'guard_on'
          ? 'guard on (production)'
          : 'guard off (development)';
      return `| ${label} | ${p.rps} | ${p.p50Ms} | ${p.p99Ms} | ${p.cpuUsPerReq} | ${p.calls} | ${p.upstreamConnectionsOpened} |`;
    }),
    '',
    '| round | on req/s | off req/s | on / off req/s | on / off CPU per req | connections opened on / off |',
    '|---|---|---|---|---|---|',
    ...r.rounds.map((x) => {
      const run = (s: Side) => r.runs.find((q) => q.round === x.round && q.side === s)!;
      const rps = (s: Side) => Math.round(run(s).ok / run(s).load.durationSec);
      return `| ${x.round} | ${rps('guard_on')} | ${rps('guard_off')} | ${x.rpsRatio} | ${x.cpuRatio} | ${run('guard_on').upstreamConnectionsOpened} / ${run('guard_off').upstreamConnectionsOpened} |`;
    }),
    '',
    `Median per-round ratio guard on / off: **${r.medianRpsRatio}** req/s, ${r.medianCpuRatio} CPU per request.`,
    '',
    `The guard's own work per new connection, in process: allow-list test ${r.guardMicroNs.allow_list_ns} ns, public IPv4 literal ${r.guardMicroNs.public_ipv4_ns} ns, IPv6 literal ${r.guardMicroNs.public_ipv6_ns} ns, filtering a name's lookup answers ${r.guardMicroNs.lookup_filter_ns} ns (the DNS query itself is made with the guard off too). At the costliest of these, spread over the calls each connection carried: ≤ ${r.guardNsPerCallBound} ns per call.`,
    '',
    `Raw numbers: \`${file}\`.`,
    '',
  ];
  return L.join('\n');
}

await main();
