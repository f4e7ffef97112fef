/**
 * `node dist/bench/profile-diff.js [--rounds N] [--seconds N]`: where the paid path's extra CPU goes, function by
 * function (issue 14 item 1). Alternates a pass-through and a paid gateway (`wrk -t2 -c50`, gateway on core 1, stub and
 * wrk on core 0, each under `--cpu-prof`), turns each function's share of the main thread's self time into µs per
 * request, averages the rounds and prints paid − pass-through, largest first. The checkpoint thread is not in the
 * profile: its CPU per request is printed apart.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { topSelfTime } from './profile.js';
import { cpuMicros, mainThreadCpuMicros } from './procs.js';
import { runWrk } from './phase-latency.js';
import { seedDataDir, startGateway, startStub } from './setup.js';

interface Sampled {
  /** Main-thread CPU µs per request. */
  main: number;
  /** CPU µs per request of every other thread (checkpoints, libuv's pool, V8's helpers). */
  others: number;
  /** Function (name and place) → main-thread self µs per request. */
  byFunction: Map<string, number>;
}

async function _sample(paid: boolean, seconds: number): Promise<Sampled> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-pdiff-'));
  const stub = await startStub('0');
  const seed = await seedDataDir(stub.url, 'pdiff');
  const gw = await startGateway(seed, 'gateway-pdiff', {
    metering: paid,
    cpus: '1',
    nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`],
    env: { SVC_GATEWAY_DEFAULT_RATE_PER_MIN: '1000000000' },
  });
  const target = { url: gw.url + seed.path, headers: { authorization: `Bearer ${seed.key}` } };
  const load = { threads: 2, connections: 50 };
  let main = 0;
  let all = 0;
  let requests = 0;
  try {
    await runWrk('wrk', target, 2, '0', load);
    const m0 = mainThreadCpuMicros(gw.pid);
    const a0 = cpuMicros(gw.pid);
    const w = await runWrk('wrk', target, seconds, '0', load);
    main = mainThreadCpuMicros(gw.pid) - m0;
    all = cpuMicros(gw.pid) - a0;
    requests = w.requests;
  } finally {
    await gw.stop();
    await stub.stop();
  }
  // The profile spans the whole process life (start-up and warm-up too); its shares are close enough for a diff.
  const perRequest = main / requests;
  const byFunction = new Map<string, number>();
  for (const l of topSelfTime(dir, 1000)) byFunction.set(`${l.fn} ${l.where}`, (l.percent / 100) * perRequest);
  rmSync(dir, { recursive: true, force: true });
  rmSync(seed.dataDir, { recursive: true, force: true });
  return { main: perRequest, others: (all - main) / requests, byFunction };
}

function _mean(samples: Sampled[]): Sampled {
  const byFunction = new Map<string, number>();
  for (const s of samples)
    for (const [k, v] of s.byFunction) byFunction.set(k, (byFunction.get(k) ?? 0) + v / samples.length);
  const avg = (f: (s: Sampled) => number) => samples.reduce((n, s) => n + f(s), 0) / samples.length;
  return { main: avg((s) => s.main), others: avg((s) => s.others), byFunction };
}

async function _main(): Promise<void> {
  const argv = process.argv.slice(2);
  const opt = (name: string, dflt: number) => (argv.includes(name) ? Number(argv[argv.indexOf(name) + 1]) : dflt);
  const rounds = opt('--rounds', 2);
  const seconds = opt('--seconds', 6);
  const pass: Sampled[] = [];
  const paid: Sampled[] = [];
  for (let r = 0; r < rounds; r++) {
    pass.push(await _sample(false, seconds));
    paid.push(await _sample(true, seconds));
  }
  const a = _mean(pass);
  const b = _mean(paid);
  const f = (n: number) => n.toFixed(2).padStart(7);
  console.log(`main thread µs/request: pass-through ${a.main.toFixed(1)}, paid ${b.main.toFixed(1)}`);
  console.log(`other threads µs/request: pass-through ${a.others.toFixed(1)}, paid ${b.others.toFixed(1)}`);
  console.log('   diff    pass    paid  function');
  const keys = new Set([...a.byFunction.keys(), ...b.byFunction.keys()]);
  const rows = [...keys]
    .map((k) => ({ k, pt: a.byFunction.get(k) ?? 0, pd: b.byFunction.get(k) ?? 0 }))
    .sort((x, y) => y.pd - y.pt - (x.pd - x.pt));
  for (const r of rows.slice(0, 30)) console.log(`${f(r.pd - r.pt)} ${f(r.pt)} ${f(r.pd)}  ${r.k}`);
}

void _main();
