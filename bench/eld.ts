/** Orchestrator side of the event-loop-delay probe (eld-probe.ts): reset before a load run, read after. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EldSnapshot } from './eld-probe.js';
import { processTree } from './procs.js';

/** monitorEventLoopDelay records whole timer intervals; subtracting its 1 ms resolution leaves the delay. */
export const ELD_RESOLUTION_MS = 1;

function _read(dir: string, pid: number): EldSnapshot | null {
  const f = join(dir, `eld-${pid}.json`);
  if (!existsSync(f)) return null;
  try {
    return JSON.parse(readFileSync(f, 'utf8')) as EldSnapshot;
  } catch {
    return null;
  }
}

/** Signals every node process in the tree and waits for each fresh snapshot; returns the worst one. */
export async function eldSnapshot(dir: string, rootPid: number): Promise<EldSnapshot | null> {
  const pids = processTree(rootPid);
  const prev = new Map(pids.map((p) => [p, _read(dir, p)?.seq ?? 0]));
  for (const p of pids) {
    try {
      process.kill(p, 'SIGUSR2');
    } catch {
      /* gone */
    }
  }
  const fresh: EldSnapshot[] = [];
  const deadline = Date.now() + 1500;
  while (Date.now() < deadline) {
    fresh.length = 0;
    for (const p of pids) {
      const s = _read(dir, p);
      if (s && s.seq > (prev.get(p) ?? 0)) fresh.push(s);
    }
    // Processes without the probe (nothing written ever) are not waited for.
    const waiting = pids.filter((p) => (prev.get(p) ?? 0) > 0 || p === rootPid).length;
    if (fresh.length >= Math.max(1, waiting)) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  if (!fresh.length) return null;
  return fresh.reduce((a, b) => (b.p999Ms > a.p999Ms ? b : a));
}

/** Delay beyond the sampling interval, in ms, never below 0. */
export function eldDelay(ms: number): number {
  return Math.max(0, ms - ELD_RESOLUTION_MS);
}
