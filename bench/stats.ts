/** Small statistics and machine facts for the bench report. */
import { cpus, release } from 'node:os';
import { readFileSync } from 'node:fs';

export function median(xs: number[]): number | null {
  const v = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return null;
  const m = v.length >> 1;
  return v.length % 2 ? v[m]! : (v[m - 1]! + v[m]!) / 2;
}

export function round(x: number | null, digits = 0): number | null {
  if (x === null || !Number.isFinite(x)) return null;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

export interface Machine {
  nproc: number;
  cpuModel: string;
  kernel: string;
  node: string;
  loadavg: string;
}

export function machineInfo(): Machine {
  let loadavg = '';
  try {
    loadavg = readFileSync('/proc/loadavg', 'utf8').trim();
  } catch {
    /* not Linux */
  }
  return {
    nproc: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    kernel: release(),
    node: process.version,
    loadavg,
  };
}
