/**
 * Where the gateway's CPU goes on the paid path: a separate short load run against a gateway started with
 * `--cpu-prof` (after the measured phases, so profiling never skews the numbers), summarised by self time.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { runLoadWorker } from './phase-throughput.js';
import { seedDataDir, startGateway, type Seeded } from './setup.js';

export interface ProfileLine {
  percent: number;
  fn: string;
  where: string;
}

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
  timeDeltas: number[];
}

/** Top self-time entries (percent of non-idle samples) of the (first) .cpuprofile in `dir`; frames are grouped by function and file. */
export function topSelfTime(dir: string, n = 20): ProfileLine[] {
  // The gateway's busiest process (a PostgreSQL start also leaves its migration's short profile here).
  const file = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .sort((a, b) => statSync(join(dir, b)).size - statSync(join(dir, a)).size)[0];
  if (!file) return [];
  const p = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((x) => [x.id, x]));
  const self = new Map<string, number>();
  let total = 0;
  p.samples.forEach((id, i) => {
    const node = byId.get(id);
    const dt = p.timeDeltas[i] ?? 0;
    // Idle time is the loop waiting for I/O: leave it out so percentages are of the CPU actually used.
    if (!node || node.callFrame.functionName === '(idle)') return;
    const cf = node.callFrame;
    const where = cf.url
      ? `${cf.url.replace(/^file:\/\/.*?\/(node_modules|dist)\//, '$1/').replace(/^node:/, 'node:')}:${cf.lineNumber + 1}`
      : '';
    const key = `${cf.functionName || '(anonymous)'}\u0000${where}`;
    self.set(key, (self.get(key) ?? 0) + dt);
    total += dt;
  });
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => {
      const [fn, where] = k.split('\u0000') as [string, string];
      return { percent: Math.round((v / total) * 1000) / 10, fn, where };
    });
}

/** A fresh paid-path gateway under `node --cpu-prof`, 5 s of load, then its top self-time functions. */
export async function profilePaid(o: {
  stubUrl: string;
  dir: string;
  connections: number;
  cpus: string;
  seeds: Seeded[];
}): Promise<ProfileLine[]> {
  const seed = await seedDataDir(o.stubUrl, 'prof');
  o.seeds.push(seed);
  const gw = await startGateway(seed, 'gateway-prof', {
    metering: true,
    cpus: o.cpus,
    nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${o.dir}`],
    env: { SVC_GATEWAY_DEFAULT_RATE_PER_MIN: '1000000000' },
  });
  try {
    await runLoadWorker({
      url: gw.url + seed.path,
      connections: o.connections,
      durationSec: 5,
      headers: { authorization: `Bearer ${seed.key}` },
    });
  } finally {
    await gw.stop();
  }
  return topSelfTime(o.dir);
}
