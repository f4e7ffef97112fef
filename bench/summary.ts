/**
 * Turns the raw runs into the reported numbers: per-target medians, the median of per-round ratios,
 * added latency vs the upstream direct, and each target of issue 3 item 7 as met / not met / not measured.
 */
import { median, round } from './stats.js';
import type { LoadRun } from './phase-throughput.js';
import type { LatencyRun } from './phase-latency.js';
import type { TargetId } from './targets.js';
import type { MicroResults } from './phase-micro.js';

export interface TargetSummary {
  rps: number | null;
  p50Ms: number | null;
  p99Ms: number | null;
  cpuUsPerReq: number | null;
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

/** `eldFloorP999Ms`: the p99.9 loop delay of an idle Node process on the idle machine (what no server can go below here). */
export function summarise(
  load: LoadRun[],
  lat: LatencyRun[],
  micro: MicroResults,
  eldFloorP999Ms: number | null = null,
  fixedRate: { rate: number; runs: LoadRun[] } | null = null,
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
  const cpuRatios = {
    paidVsNginx: cpuCol('paid', 'nginx'),
    paidVsPassthrough: cpuCol('paid', 'passthrough'),
    passthroughVsNginx: cpuCol('passthrough', 'nginx'),
  };
  const cpuCost = {
    paidOverNginx: cpuCol('nginx', 'paid'),
    paidOverHaproxy: cpuCol('haproxy', 'paid'),
    passthroughOverNginx: cpuCol('nginx', 'passthrough'),
    meteringUs: r2(
      median(
        rounds.map((n) => {
          const paid = cpuOf(n, 'paid');
          const pass = cpuOf(n, 'passthrough');
          return paid !== undefined && pass !== undefined ? paid - pass : NaN;
        }),
      ),
    ),
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
    goals: _goals(throughput, ratios, cpuCost, added, micro, eldFloorP999Ms, fixed),
  };
}

function _goals(
  tp: Summary['throughput'],
  ratios: Summary['ratios'],
  cpuCost: Summary['cpuCost'],
  added: Summary['added'],
  micro: MicroResults,
  eldFloorP999Ms: number | null,
  fixed: Summary['fixedRate'],
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
  const paid = tp.paid;
  return [
    g('CPU per paid call / nginx per proxied call', '<= 2.2x', cpuCost.paidOverNginx, 'x', (v) => v <= 2.2),
    g('CPU per paid call / HAProxy-with-auth per call', '<= 1.5x', cpuCost.paidOverHaproxy, 'x', (v) => v <= 1.5),
    g('paid / @fastify/http-proxy throughput', '>= 2', ratios.paidVsFastify, '', (v) => v >= 2),
    g('metering CPU per call (paid − pass-through)', '<= 8 µs', cpuCost.meteringUs, ' µs', (v) => v <= 8),
    g('pass-through CPU / nginx', '<= 1.3x', cpuCost.passthroughOverNginx, 'x', (v) => v <= 1.3),
    g('paid / nginx throughput', '>= 0.45', ratios.paidVsNginx, '', (v) => v >= 0.45),
    g('paid / pass-through throughput', '>= 0.85', ratios.paidVsPassthrough, '', (v) => v >= 0.85),
    g(
      'added p99 latency, paid path vs direct (wrk -c1, one core)',
      '<= 1 ms',
      r2(added.paid?.p99Us != null ? added.paid.p99Us / 1000 : null),
      ' ms',
      (v) => v <= 1,
    ),
    g(
      'event-loop delay p99.9 under load (paid path, median of rounds)',
      '<= 1 ms',
      paid?.eldP999Ms ?? null,
      ` ms at saturation` +
        (fixed?.eld.paid?.p999Ms != null ? `; ${fixed.eld.paid.p999Ms} ms at a fixed ${fixed.rate} req/s` : '') +
        (eldFloorP999Ms !== null ? ` (an idle Node process on the idle machine: ${eldFloorP999Ms} ms)` : ''),
      (v) => v <= 1,
    ),
    g(
      'key auth, cache hit (CPU time per op; wall-clock in the micro section)',
      '<= 2 µs/op',
      micro.keyAuth?.cpuUsPerOp ?? null,
      ' µs/op',
      (v) => v <= 2,
      micro.keyAuth ? micro.keyAuth.error : 'micro-benchmarks skipped',
    ),
    g(
      `ledger writer, sustained ${micro.ledger?.seconds ?? '?'} s with WAL checkpoints (a row = one settled paid call)`,
      '>= 100k rows/s for 60 s',
      micro.ledger?.rowsPerSec ?? null,
      ` settles/s${micro.ledger ? ` (${micro.ledger.appendedRowsPerSec} appended table rows/s)` : ''}`,
      (v) => v >= 100_000 && (micro.ledger?.seconds ?? 0) >= 60,
      micro.ledger ? micro.ledger.error : 'micro-benchmarks skipped',
    ),
  ];
}
