/** The bench's arithmetic: ratios are medians of per-round ratios, added latency is per-round vs direct, goals judged. */
import { describe, expect, it } from 'vitest';
import { summarise } from '../../../bench/summary.js';
import { median } from '../../../bench/stats.js';
import { parseOptions } from '../../../bench/options.js';
import { eldDelay } from '../../../bench/eld.js';
import {
  MCP_ERAS,
  MCP_FLOOR_ROW,
  MCP_UNDICI_FLOOR_ROW,
  mcpCallRow,
  mcpCpuOverFloor,
} from '../../../bench/phase-mcp.js';
import type { LoadRun } from '../../../bench/phase-throughput.js';
import type { LatencyRun, WrkResult } from '../../../bench/phase-latency.js';
import type { TargetId } from '../../../bench/targets.js';

function load(round: number, target: TargetId, ok: number, cpuUsPerReq: number): LoadRun {
  return {
    round,
    target,
    load: {
      responses: ok,
      rps: ok / 10,
      p50Ms: 1,
      p99Ms: 2,
      statusCounts: { '200': ok },
      errors: 0,
      timeouts: 0,
      durationSec: 10,
    },
    expected: ok,
    cpuUsPerReq,
    coreBusy: [1, 1],
    eld:
      target === 'paid'
        ? { p999Ms: 0.5, p99Ms: 0.2, maxMs: 3, raw: { seq: 1, count: 1, p50Ms: 1, p99Ms: 1.2, p999Ms: 1.5, maxMs: 4 } }
        : null,
    eldIdle: null,
  };
}

function lat(round: number, target: TargetId, p50Us: number, p99Us: number): LatencyRun {
  const wrk: WrkResult = {
    requests: 1000,
    durationUs: 1e6,
    statusErrors: 0,
    connectErrors: 0,
    readErrors: 0,
    timeouts: 0,
    p50Us,
    p90Us: p99Us,
    p99Us,
    p999Us: p99Us,
    meanUs: p50Us,
    maxUs: p99Us,
  };
  return { round, target, wrk, eld: null };
}

describe('bench summary', () => {
  it('takes the median of per-round ratios, not the ratio of medians', () => {
    // Round throughputs chosen so the two differ: per-round paid/nginx = 0.5, 0.2, 0.6 -> median 0.5.
    const runs = [
      load(1, 'nginx', 100_000, 20),
      load(1, 'paid', 50_000, 40),
      load(2, 'nginx', 200_000, 20),
      load(2, 'paid', 40_000, 50),
      load(3, 'nginx', 50_000, 20),
      load(3, 'paid', 30_000, 40),
    ];
    const s = summarise(runs, [], {});
    expect(s.ratios.paidVsNginx).toBe(0.5);
    expect(s.throughput.paid?.rps).toBe(4000);
    expect(s.cpuRatios.paidVsNginx).toBe(0.5);
    // CPU per paid call over nginx's: 40/20, 50/20, 40/20 -> median 2x, within the 2.5x target.
    expect(s.cpuCost.paidOverNginx).toBe(2);
    expect(s.goals.find((g) => g.name.startsWith('CPU per paid call / nginx'))?.met).toBe(true);
  });

  it('reads the CPU targets beside the relay floors of the same rounds', () => {
    const runs = [1, 2, 3].flatMap((n) => [
      load(n, 'nginx', 1000, 30),
      load(n, 'haproxy', 1000, 40),
      load(n, 'relay-floor', 1000, 30 + 12 * n),
      load(n, 'metered-floor', 1000, 50 + 12 * n),
      load(n, 'spin-floor', 1000, 90 + 12 * n + n),
      load(n, 'passthrough', 1000, 90),
      load(n, 'paid', 1000, 150),
    ]);
    const s = summarise(runs, [], {});
    // The spin floor over the bare relay, per round: 61/62/63 µs -> median 62.
    expect(s.cpuCost.spinFloorExtraUs).toBe(62);
    // Per round: relay 42/54/66 over nginx's 30 -> 1.4/1.8/2.2x; metered 62/74/86 -> 2.07/2.47/2.87x; row + hash 20 µs.
    expect(s.cpuCost.relayFloorOverNginx).toBe(1.8);
    expect(s.cpuCost.meteredFloorOverNginx).toBe(2.47);
    expect(s.cpuCost.meteredFloorOverHaproxy).toBe(1.85);
    expect(s.cpuCost.floorMeteringUs).toBe(20);
    const goal = (prefix: string) => s.goals.find((g) => g.name.startsWith(prefix));
    expect(goal('pass-through CPU / nginx')).toMatchObject({ measured: '3x (relay floor: 1.8x)', met: false });
    expect(goal('CPU per paid call / nginx')?.measured).toBe('5x (metered relay floor: 2.47x)');
    expect(goal('metering CPU per call')?.measured).toBe('60 µs (floor: metered − relay floor 20 µs)');
  });

  it("reports the paid runs' calls per settle commit as the median of their rounds", () => {
    const runs = [20, 31, 25].flatMap((perCommit, i) => [
      { ...load(i + 1, 'paid', 1000, 150), callsPerCommit: perCommit },
      // Only the paid target's commits count: another target's figure never enters the median.
      { ...load(i + 1, 'passthrough', 1000, 90), callsPerCommit: 100 },
    ]);
    expect(summarise(runs, [], {}).cpuCost.paidCallsPerCommit).toBe(25);
    expect(summarise([load(1, 'paid', 1000, 150)], [], {}).cpuCost.paidCallsPerCommit).toBeNull();
  });

  it('measures added latency against the direct run of the same round', () => {
    const s = summarise(
      [],
      [lat(1, 'direct', 40, 100), lat(1, 'paid', 300, 900), lat(2, 'direct', 50, 5000), lat(2, 'paid', 320, 5600)],
      {},
    );
    expect(s.added.paid).toEqual({ p50Us: 265, p99Us: 700 });
    // Without a commit floor measured in the same run the target cannot be judged.
    expect(s.goals.find((g) => g.name.startsWith('added p99'))?.met).toBe(null);
  });

  it('judges added p99 against the commit floor of the same run, plus 0.5 ms', () => {
    const direct = [lat(1, 'direct', 40, 100), lat(2, 'direct', 50, 200)];
    const floor = [lat(1, 'commit-floor', 200, 1100), lat(2, 'commit-floor', 210, 1200)];
    const within = summarise([], [...direct, ...floor, lat(1, 'paid', 300, 1500), lat(2, 'paid', 320, 1600)], {});
    expect(within.added['commit-floor']).toEqual({ p50Us: 160, p99Us: 1000 });
    expect(within.goals.find((g) => g.name.startsWith('added p99'))).toMatchObject({
      met: true,
      goal: '<= the commit floor + 0.5 ms (1.5 ms)',
      measured: '1.4 ms (commit floor: 1 ms)',
    });
    const over = summarise([], [...direct, ...floor, lat(1, 'paid', 300, 1700), lat(2, 'paid', 320, 1800)], {});
    expect(over.goals.find((g) => g.name.startsWith('added p99'))?.met).toBe(false);
  });

  it('judges MCP against the relay floor and PostgreSQL against SQLite from the same run', () => {
    const row = (name: string, cpu: number) => ({
      name,
      req_per_s: 1,
      p50_ms: 1,
      p99_ms: 1,
      errors: 0,
      non2xx: 0,
      mcp_cpu_us_per_req: cpu,
      gateway_cpu_us_per_req: 1,
      all_cpu_us_per_req: 1,
    });
    const rows = [
      row(MCP_FLOOR_ROW, 140),
      row(MCP_UNDICI_FLOOR_ROW, 175),
      row(mcpCallRow(MCP_ERAS.stateless), 175),
      row(mcpCallRow(MCP_ERAS.session), 280),
    ];
    const mcp = {
      seconds: 1,
      rows,
      loadAverage: { start: [], end: [] },
      cpuOverFloor: mcpCpuOverFloor(rows),
      cpuOverUndiciFloor: mcpCpuOverFloor(rows, MCP_UNDICI_FLOOR_ROW),
    };
    // The verdict reads the floor on MCP's own hop client; the undici relay is reported beside it.
    expect(mcp.cpuOverFloor).toEqual({ stateless: 1.25, session: 2 });
    expect(mcp.cpuOverUndiciFloor).toEqual({ stateless: 1, session: 1.6 });
    const runs = [load(1, 'paid', 50_000, 40), { ...load(1, 'paid-pg', 20_000, 70), backingCpuUsPerReq: 55 }];
    const s = summarise(runs, [], {}, null, null, mcp);
    expect(s.throughput['paid-pg']).toMatchObject({ cpuUsPerReq: 70, backingCpuUsPerReq: 55 });
    expect(s.throughput.paid?.backingCpuUsPerReq).toBe(null);
    expect(s.goals.find((g) => g.name.startsWith('MCP call_api'))?.met).toBe(true);
    expect(s.cpuCost.pgOverSqlite).toBe(1.75);
    expect(s.goals.find((g) => g.name.includes('PostgreSQL / SQLite'))?.met).toBe(false);
  });

  it('judges loop delay on the gateway alone and shows the idle machine floor beside it', () => {
    const runs = [load(1, 'paid', 50_000, 40)].map((r) => ({
      ...r,
      eld: { p999Ms: 3.5, p99Ms: 1, maxMs: 9, raw: { seq: 1, count: 1, p50Ms: 1, p99Ms: 2, p999Ms: 4.5, maxMs: 10 } },
    }));
    expect(summarise(runs, [], {}, 2.8).throughput.paid).toMatchObject({ eldP999Ms: 3.5 });
    const fixedRuns = [1.2, 0.8, 5].map((p999Ms, i) => ({
      ...runs[0]!,
      round: i + 1,
      eld: { ...runs[0]!.eld, p999Ms },
    }));
    const s = summarise(runs, [], {}, 2.8, { rate: 2000, runs: fixedRuns });
    expect(s.fixedRate?.eld.paid).toMatchObject({ p999Ms: 1.2, rps: 5000 });
  });

  it('reports a goal without a measurement as not measured, never as met', () => {
    const s = summarise([], [], {});
    expect(s.goals.every((g) => g.met === null)).toBe(true);
  });

  it('judges the ledger writer on 60 s sustained, not on a short run', () => {
    const ledger = {
      rowsPerSec: 150_000,
      minWindowRowsPerSec: 140_000,
      rowsPerCpuSec: 160_000,
      rows: 1,
      appendedRowsPerSec: 450_000,
      appendedPerSettle: 3,
      calibrationInsertUs: 1,
      seconds: 5,
      batch: 128,
      checkpoints: 4,
      checkpointMsMax: 1,
      walMaxBytes: 1,
      consistent: true,
    };
    const ledgerGoal = (s: ReturnType<typeof summarise>) => s.goals.find((g) => g.name.startsWith('ledger writer'));
    expect(ledgerGoal(summarise([], [], { ledger }))?.met).toBe(false);
    expect(ledgerGoal(summarise([], [], { ledger: { ...ledger, seconds: 60 } }))?.met).toBe(true);
    expect(ledgerGoal(summarise([], [], { ledger: { ...ledger, seconds: 60, rowsPerSec: 100_000 } }))?.met).toBe(false);
  });
});

describe('bench helpers', () => {
  it.each([
    [[3, 1, 2], 2],
    [[4, 1, 3, 2], 2.5],
    [[], null],
  ])('median(%j) = %j', (xs, m) => expect(median(xs)).toBe(m));

  it('subtracts the 1 ms sampling interval from loop-delay percentiles', () => {
    expect(eldDelay(1.25)).toBeCloseTo(0.25);
    expect(eldDelay(0.5)).toBe(0);
  });

  it('has a quick mode and a recorded mode with a 60 s ledger run', () => {
    expect(parseOptions(['--quick'])).toMatchObject({ quick: true, record: false, rounds: 2 });
    expect(parseOptions([])).toMatchObject({ quick: false, record: true, rounds: 5, ledgerSec: 60 });
    expect(parseOptions(['--ledger-seconds', '10', '--no-record']).ledgerSec).toBe(10);
    expect(() => parseOptions(['--bogus'])).toThrow(/unknown option/);
  });
});
