/**
 * Turns the raw runs into the reported numbers: per-target medians, the median of per-round ratios,
 * added latency vs the upstream direct, and each current target (issue 28's round-3 table, issue 27 item 7) as met /
 * not met / not measured.
 */
import { median, round } from './stats.js';
import type { LoadRun } from './phase-throughput.js';
import type { LatencyRun } from './phase-latency.js';
import type { TargetId } from './targets.js';
import type { MicroResults } from './phase-micro.js';
import type { McpPhase } from './phase-mcp.js';

export interface TargetSummary {
  rps: number | null;
  p50Ms: number | null;
  p99Ms: number | null;
  cpuUsPerReq: number | null;
  /** CPU of the target's backing server per request (the PostgreSQL server for `paid-pg`). */
  backingCpuUsPerReq: number | null;
  eldP999Ms: number | null;
  eldP999MsWorst: number | null;
  /** Median p99.9 loop delay of an idle Node process on the same core during this target's runs. */
  eldIdleP999Ms: number | null;
  rounds: number;
  unexpectedResponses: number;
}

export interface Goal {
  name: string;
  goal: string;
  measured: string;
  met: boolean | null;
}

export interface Summary {
  throughput: Partial<Record<TargetId, TargetSummary>>;
  ratios: {
    paidVsNginx: number | null;
    paidVsPassthrough: number | null;
    passthroughVsNginx: number | null;
    paidVsFastify: number | null;
    perRound: Record<string, number | null>[];
  };
  /**
   * The same ratios from CPU per request (nginx µs/req ÷ paid µs/req): the throughput ratio if each server's own
   * core were the only limit. Tells whether a req/s ratio was bounded by the load generator's core instead.
   */
  cpuRatios: { paidVsNginx: number | null; paidVsPassthrough: number | null; passthroughVsNginx: number | null };
  /**
   * CPU per request against the peers (issue 14), median of per-round figures: the paid call's CPU over nginx's
   * and HAProxy-with-auth's per proxied call, pass-through's over nginx's, and metering's µs (paid − pass-through).
   */
  cpuCost: {
    paidOverNginx: number | null;
    paidOverHaproxy: number | null;
    passthroughOverNginx: number | null;
    meteringUs: number | null;
    /** The gateway's CPU per paid call on PostgreSQL over its CPU on SQLite (issue 27 item 7). */
    pgOverSqlite: number | null;
    /** The paid path on the JS fallback server over native uWS (issue 23 item 6). */
    fallbackOverNative: number | null;
    /** The floors (bench/relay-floor.ts): the bare relay over nginx, the metered relay over nginx and HAProxy. */
    relayFloorOverNginx: number | null;
    meteredFloorOverNginx: number | null;
    meteredFloorOverHaproxy: number | null;
    /** What the metered floor adds to the bare relay (key hash + a committed row per call), µs. */
    floorMeteringUs: number | null;
    /** What the spin floor's busy CPU per request cost the bare relay in all, µs (absent before issue 28's row). */
    spinFloorExtraUs?: number | null;
    /** Calls per settle commit in the paid runs, median of rounds (absent before it was counted). */
    paidCallsPerCommit?: number | null;
  };
  latency: Partial<
    Record<TargetId, { p50Us: number | null; p99Us: number | null; p999Us: number | null; eldMaxMs: number | null }>
  >;
  added: Partial<Record<TargetId, { p50Us: number | null; p99Us: number | null }>>;
  /** Below saturation: median loop delay p99.9 per gateway target at a fixed request rate, and the idle process's. */
  fixedRate: {
    rate: number;
    eld: Partial<Record<TargetId, { p999Ms: number | null; idleP999Ms: number | null; rps: number | null }>>;
  } | null;
  goals: Goal[];
}

const r2 = (x: number | null) => round(x, 2);

function _ratio(a: number | undefined, b: number | undefined): number | null {
  return a !== undefined && b !== undefined && b > 0 ? a / b : null;
}

/** Calls per settle commit in the paid throughput runs, median of rounds (null when none was counted). */
export function paidCallsPerCommit(load: LoadRun[]): number | null {
  return median(load.flatMap((r) => (r.target === 'paid' && r.callsPerCommit != null ? [r.callsPerCommit] : [])));
}

/** `eldFloorP999Ms`: the p99.9 loop delay of an idle Node process on the idle machine (what no server can go below here). */
export function summarise(
  load: LoadRun[],
  lat: LatencyRun[],
  micro: MicroResults,
  eldFloorP999Ms: number | null = null,
  fixedRate: { rate: number; runs: LoadRun[] } | null = null,
  mcp: McpPhase | null = null,
): Summary {
  const throughput: Summary['throughput'] = {};
  for (const id of [...new Set(load.map((r) => r.target))]) {
    const rs = load.filter((r) => r.target === id);
    const elds = rs.flatMap((r) => (r.eld ? [r.eld.p999Ms] : []));
    throughput[id] = {
      rps: round(median(rs.map((r) => r.expected / r.load.durationSec))),
      p50Ms: r2(median(rs.map((r) => r.load.p50Ms))),
      p99Ms: r2(median(rs.map((r) => r.load.p99Ms))),
      cpuUsPerReq: r2(median(rs.map((r) => r.cpuUsPerReq ?? NaN))),
      backingCpuUsPerReq: r2(median(rs.flatMap((r) => (r.backingCpuUsPerReq != null ? [r.backingCpuUsPerReq] : [])))),
      eldP999Ms: r2(median(elds)),
      eldP999MsWorst: elds.length ? r2(Math.max(...elds)) : null,
      eldIdleP999Ms: r2(median(rs.flatMap((r) => (r.eldIdle ? [r.eldIdle.p999Ms] : [])))),
      rounds: rs.length,
      unexpectedResponses: rs.reduce((s, r) => s + r.load.responses - r.expected + r.load.errors, 0),
    };
  }
  const rounds = [...new Set(load.map((r) => r.round))];
  const perRound = rounds.map((n) => {
    const rps = (id: TargetId) => {
      const run = load.find((r) => r.round === n && r.target === id);
      return run ? run.expected / run.load.durationSec : undefined;
    };
    return {
      round: n,
      paidVsNginx: r2(_ratio(rps('paid'), rps('nginx'))),
      paidVsPassthrough: r2(_ratio(rps('paid'), rps('passthrough'))),
      passthroughVsNginx: r2(_ratio(rps('passthrough'), rps('nginx'))),
      paidVsFastify: r2(_ratio(rps('paid'), rps('fastify'))),
    };
  });
  const col = (k: 'paidVsNginx' | 'paidVsPassthrough' | 'passthroughVsNginx' | 'paidVsFastify') =>
    r2(median(perRound.map((p) => p[k] ?? NaN)));
  const cpuOf = (n: number, id: TargetId) =>
    load.find((r) => r.round === n && r.target === id)?.cpuUsPerReq ?? undefined;
  const cpuCol = (num: TargetId, den: TargetId) =>
    r2(median(rounds.map((n) => _ratio(cpuOf(n, den), cpuOf(n, num)) ?? NaN)));
  /** Median over rounds of one target's CPU per request minus another's, µs. */
  const cpuDiff = (a: TargetId, b: TargetId) =>
    r2(
      median(
        rounds.map((n) => {
          const x = cpuOf(n, a);
          const y = cpuOf(n, b);
          return x !== undefined && y !== undefined ? x - y : NaN;
        }),
      ),
    );
  const cpuRatios = {
    paidVsNginx: cpuCol('paid', 'nginx'),
    paidVsPassthrough: cpuCol('paid', 'passthrough'),
    passthroughVsNginx: cpuCol('passthrough', 'nginx'),
  };
  const cpuCost = {
    paidOverNginx: cpuCol('nginx', 'paid'),
    paidOverHaproxy: cpuCol('haproxy', 'paid'),
    passthroughOverNginx: cpuCol('nginx', 'passthrough'),
    pgOverSqlite: cpuCol('paid', 'paid-pg'),
    fallbackOverNative: cpuCol('paid', 'paid-fallback'),
    meteringUs: cpuDiff('paid', 'passthrough'),
    // The floors the CPU targets are read against (bench/relay-floor.ts), from the same rounds.
    relayFloorOverNginx: cpuCol('nginx', 'relay-floor'),
    meteredFloorOverNginx: cpuCol('nginx', 'metered-floor'),
    meteredFloorOverHaproxy: cpuCol('haproxy', 'metered-floor'),
    floorMeteringUs: cpuDiff('metered-floor', 'relay-floor'),
    // What SPIN_FLOOR_US of busy CPU per request cost the bare relay in all (the spin and the kernel's growth).
    spinFloorExtraUs: cpuDiff('spin-floor', 'relay-floor'),
    paidCallsPerCommit: r2(paidCallsPerCommit(load)),
  };
  const ratios = {
    paidVsFastify: col('paidVsFastify'),
    paidVsNginx: col('paidVsNginx'),
    paidVsPassthrough: col('paidVsPassthrough'),
    passthroughVsNginx: col('passthroughVsNginx'),
    perRound,
  };

  const latency: Summary['latency'] = {};
  const added: Summary['added'] = {};
  for (const id of [...new Set(lat.map((r) => r.target))]) {
    const rs = lat.filter((r) => r.target === id);
    latency[id] = {
      p50Us: median(rs.map((r) => r.wrk.p50Us)),
      p99Us: median(rs.map((r) => r.wrk.p99Us)),
      p999Us: median(rs.map((r) => r.wrk.p999Us)),
      eldMaxMs: r2(median(rs.flatMap((r) => (r.eld ? [r.eld.maxMs] : [])))),
    };
    if (id === 'direct') continue;
    const deltas = rs.flatMap((r) => {
      const d = lat.find((x) => x.round === r.round && x.target === 'direct');
      return d ? [{ p50: r.wrk.p50Us - d.wrk.p50Us, p99: r.wrk.p99Us - d.wrk.p99Us }] : [];
    });
    added[id] = { p50Us: median(deltas.map((d) => d.p50)), p99Us: median(deltas.map((d) => d.p99)) };
  }
  let fixed: Summary['fixedRate'] = null;
  if (fixedRate && fixedRate.runs.length) {
    const eld: NonNullable<Summary['fixedRate']>['eld'] = {};
    for (const id of [...new Set(fixedRate.runs.map((r) => r.target))]) {
      const rs = fixedRate.runs.filter((r) => r.target === id);
      eld[id] = {
        p999Ms: r2(median(rs.flatMap((r) => (r.eld ? [r.eld.p999Ms] : [])))),
        idleP999Ms: r2(median(rs.flatMap((r) => (r.eldIdle ? [r.eldIdle.p999Ms] : [])))),
        rps: round(median(rs.map((r) => r.load.rps)), 0),
      };
    }
    fixed = { rate: fixedRate.rate, eld };
  }
  return {
    throughput,
    ratios,
    cpuRatios,
    cpuCost,
    latency,
    added,
    fixedRate: fixed,
    goals: _goals(ratios, cpuCost, added, micro, mcp),
  };
}

function _goals(
  ratios: Summary['ratios'],
  cpuCost: Summary['cpuCost'],
  added: Summary['added'],
  micro: MicroResults,
  mcp: McpPhase | null,
): Goal[] {
  const g = (
    name: string,
    goal: string,
    value: number | null,
    unit: string,
    ok: (v: number) => boolean,
    why?: string,
  ): Goal => ({
    name,
    goal,
    measured: value === null ? `not measured${why ? `: ${why}` : ''}` : `${value}${unit}`,
    met: value === null ? null : ok(value),
  });
  const ms = (us: number | null | undefined) => r2(us != null ? us / 1000 : null);
  const floorP99 = ms(added['commit-floor']?.p99Us);
  const paidP99 = ms(added.paid?.p99Us);
  return [
    g(
      'metering CPU per call (paid − pass-through)',
      '<= 20 µs',
      cpuCost.meteringUs,
      ` µs (floor: metered − relay floor ${cpuCost.floorMeteringUs ?? 'n/a'} µs)`,
      (v) => v <= 20,
    ),
    g(
      `ledger writer, sustained${micro.ledger ? ` ${micro.ledger.seconds} s` : ''} with WAL checkpoints (a row = one settled paid call)`,
      '>= 110k settles/s for 60 s',
      micro.ledger?.rowsPerSec ?? null,
      ` settles/s${micro.ledger ? ` (${micro.ledger.appendedRowsPerSec} appended table rows/s)` : ''}`,
      (v) => v >= 110_000 && (micro.ledger?.seconds ?? 0) >= 60,
      micro.ledger ? micro.ledger.error : 'micro-benchmarks skipped',
    ),
    g(
      'pass-through CPU / nginx',
      '<= 1.5x',
      cpuCost.passthroughOverNginx,
      `x (relay floor: ${cpuCost.relayFloorOverNginx ?? 'n/a'}x)`,
      (v) => v <= 1.5,
    ),
    g(
      'CPU per paid call / nginx per proxied call',
      '<= 2.5x',
      cpuCost.paidOverNginx,
      `x (metered relay floor: ${cpuCost.meteredFloorOverNginx ?? 'n/a'}x)`,
      (v) => v <= 2.5,
    ),
    g(
      'CPU per paid call / HAProxy-with-auth per call',
      '<= 2.0x',
      cpuCost.paidOverHaproxy,
      `x (metered relay floor: ${cpuCost.meteredFloorOverHaproxy ?? 'n/a'}x)`,
      (v) => v <= 2,
    ),
    g('paid / @fastify/http-proxy throughput', '>= 2', ratios.paidVsFastify, '', (v) => v >= 2),
    g(
      'added p99 at one call in flight, paid path vs direct (wrk -c1, one core)',
      `<= the commit floor + 0.5 ms${floorP99 !== null ? ` (${r2(floorP99 + 0.5)} ms)` : ''}`,
      floorP99 === null ? null : paidP99,
      ` ms (commit floor: ${floorP99} ms)`,
      (v) => floorP99 !== null && v <= floorP99 + 0.5,
      `the commit floor was not measured in this run (paid: ${paidP99 ?? 'n/a'} ms)`,
    ),
    g(
      "MCP call_api CPU / the bare relay floor on MCP's hop client (2026-07-28, stateless)",
      '<= 1.3x',
      mcp?.cpuOverFloor.stateless ?? null,
      `x (2025-11-25 session era: ${mcp?.cpuOverFloor.session ?? 'n/a'}x${
        mcp?.cpuOverUndiciFloor
          ? `; over the undici relay of issue 11: ${mcp.cpuOverUndiciFloor.stateless ?? 'n/a'}x stateless, ${mcp.cpuOverUndiciFloor.session ?? 'n/a'}x session`
          : ''
      })`,
      (v) => v <= 1.3,
      mcp ? mcp.error : 'MCP phase skipped',
    ),
    g('gateway CPU per paid call, PostgreSQL / SQLite', '<= 1.6x', cpuCost.pgOverSqlite, 'x', (v) => v <= 1.6),
    g(
      'key auth, cache hit (CPU time per op; wall-clock in the micro section)',
      '<= 2 µs/op',
      micro.keyAuth?.cpuUsPerOp ?? null,
      ' µs/op',
      (v) => v <= 2,
      micro.keyAuth ? micro.keyAuth.error : 'micro-benchmarks skipped',
    ),
  ];
}
