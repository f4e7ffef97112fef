/**
 * MCP phase of `npm run bench` (issue 28's target: MCP `call_api` CPU per call against the bare relay floor).
 * Runs bench/mcp.bench.ts as its own process (it starts the whole marketplace as `npm start` does) with only the
 * rows the target needs: the direct gateway call with an Idempotency-Key, call_api in both protocol eras, and the
 * floor relay; no fixed-rate pairs. The full MCP table stays `node dist/bench/mcp.bench.js [seconds]`.
 */
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { McpRow } from './mcp.bench.js';
import { ROOT } from './setup.js';

/** The floor: MCP's own hop client (svc's HTTP/1.1 client) behind a bare node:http listener. */
export const MCP_FLOOR_ROW =
  "floor: bare node:http + svc's HTTP/1.1 client relay to the gateway (MCP's hop client, no MCP)";
/** The floor as issue 11 defined it, kept beside: the same relay on undici (MCP's hop client until issue 28). */
export const MCP_UNDICI_FLOOR_ROW = 'floor: bare node:http + undici relay to the gateway (no MCP)';
export const MCP_ERAS = { session: '2025-11-25, session', stateless: '2026-07-28, stateless' } as const;
export const mcpCallRow = (era: string) => `MCP call_api (${era})`;
const DIRECT_ROW = 'gateway GET /demo-weather/current + Idempotency-Key';

export interface McpPhase {
  seconds: number;
  rows: McpRow[];
  loadAverage: { start: number[]; end: number[] };
  /** MCP process CPU per call_api over the relay's CPU per relayed call, per era. */
  cpuOverFloor: { session: number | null; stateless: number | null };
  /** The same over the undici relay (the floor as issue 11 defined it); absent in results before issue 28's hop. */
  cpuOverUndiciFloor?: { session: number | null; stateless: number | null };
  error?: string;
}

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export function mcpCpuOverFloor(rows: McpRow[], floorRow = MCP_FLOOR_ROW): McpPhase['cpuOverFloor'] {
  const cpu = (name: string) => rows.find((r) => r.name === name)?.mcp_cpu_us_per_req ?? null;
  const floor = cpu(floorRow);
  const ratio = (name: string) => {
    const v = cpu(name);
    return v !== null && floor ? Math.round((v / floor) * 100) / 100 : null;
  };
  return { session: ratio(mcpCallRow(MCP_ERAS.session)), stateless: ratio(mcpCallRow(MCP_ERAS.stateless)) };
}

export async function runMcpPhase(seconds: number, dir: string, log: (s: string) => void): Promise<McpPhase> {
  const out = join(dir, 'mcp-phase.json');
  const only = [
    DIRECT_ROW,
    mcpCallRow(MCP_ERAS.session),
    mcpCallRow(MCP_ERAS.stateless),
    MCP_FLOOR_ROW,
    MCP_UNDICI_FLOOR_ROW,
  ]
    .map((n) => `^${esc(n)}$`)
    .join('|');
  log(`MCP phase: call_api (both eras), the direct call and the floor relays, ${seconds} s each`);
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, 'dist', 'bench', 'mcp.bench.js'), String(seconds)], {
      env: { ...process.env, MCP_BENCH_ONLY: only, MCP_BENCH_SHARES: '', MCP_BENCH_OUT: out },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    child.once('exit', (c) => resolve(c));
  });
  try {
    const r = JSON.parse(readFileSync(out, 'utf8')) as {
      rows: McpRow[];
      load_average: { start: number[]; end: number[] };
    };
    return {
      seconds,
      rows: r.rows,
      loadAverage: r.load_average,
      cpuOverFloor: mcpCpuOverFloor(r.rows),
      cpuOverUndiciFloor: mcpCpuOverFloor(r.rows, MCP_UNDICI_FLOOR_ROW),
    };
  } catch (e) {
    return {
      seconds,
      rows: [],
      loadAverage: { start: [], end: [] },
      cpuOverFloor: { session: null, stateless: null },
      cpuOverUndiciFloor: { session: null, stateless: null },
      error: `mcp.bench exited ${code}: ${(e as Error).message}`,
    };
  } finally {
    rmSync(out, { force: true });
  }
}
