/**
 * Renders one bench run as Markdown: machine, method, each goal met or not, every measured number.
 * bench/RESULTS.md is this text plus the hand-written analysis kept below the `<!-- notes -->` marker.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { BenchResult } from './run.js';
import { SPIN_FLOOR_US, TARGET_LABELS, type TargetId } from './targets.js';
import { median } from './stats.js';

export const NOTES_MARKER =
  '<!-- notes: hand-written analysis below this line is kept when the bench rewrites this file -->';

const fmt = (v: number | null | undefined, unit = ''): string =>
  v === null || v === undefined || Number.isNaN(v) ? 'n/a' : `${v}${unit}`;

export function renderMarkdown(r: BenchResult): string {
  const L: string[] = [];
  const s = r.summary;
  L.push(`# Gateway benchmark results`, '');
  L.push(
    `Run: ${r.startedAt} → ${r.finishedAt} (${r.options.quick ? 'QUICK harness check, not a recorded result' : r.argv.some((a) => !a.startsWith('--record')) ? 'partial run: the flags below change the method' : 'full run'}), \`npm run bench${r.argv.length ? ' -- ' + r.argv.join(' ') : ''}\``,
  );
  L.push(
    `Machine: ${r.machine.nproc} CPUs (${r.machine.cpuModel}), kernel ${r.machine.kernel}, Node ${r.machine.node}. Load average at start ${r.loadavgStart}, at end ${r.machine.loadavg}.`,
  );
  L.push(
    `A virtual machine's ${r.machine.nproc} cores: absolute numbers move from hour to hour with its host (the load averages above say what else ran), so ` +
      `the ratios compare targets measured in the same round, minutes apart, which is what the goals use. Core busy columns show how loaded each core was.`,
  );
  L.push('');
  L.push(
    `Method: ${r.load.some((x) => '2xx/3xx' in x.load.statusCounts) ? 'wrk, 2 threads' : 'autocannon'} (${r.options.connections} connections, ${r.options.durationSec} s per target per round, ${r.options.rounds} interleaved rounds, order rotated each round) ` +
      `pinned with the stub upstream on core 0; the server under test (nginx, HAProxy, @fastify/http-proxy, gateway) on core 1. Ratios are the median of per-round ratios. CPU µs/req is utime+stime of the server under test ` +
      `(/proc/<pid>/stat, whole process tree) over the run divided by responses. Added latency: everything on core 0, \`wrk -t1 -c1\` ${r.options.latencySec} s per target per round, ` +
      `${r.options.latencyRounds} rounds, median of per-round differences from the upstream direct. Event-loop delay: \`monitorEventLoopDelay\` (1 ms resolution) preloaded into the gateway ` +
      `process (bench/eld-probe.ts), reported as delay beyond the 1 ms sampling interval, per load run; the same probe in an idle Node process on core 1 shows the share of the machine's scheduling` +
      (r.eldFloor
        ? `; before any load, that idle process showed p99 ${r.eldFloor.p99Ms} ms, p99.9 ${r.eldFloor.p999Ms} ms, max ${r.eldFloor.maxMs} ms (the machine's floor).`
        : '.'),
  );
  L.push('');
  L.push(
    '## Goals (issue 28 round 3; issue 27 item 7)',
    '',
    'A target a measured floor of the same run sits under is judged against that floor: the commit floor for added latency, the bare relay for MCP.',
    '',
    '| goal | target | measured | met |',
    '|---|---|---|---|',
  );
  for (const g of s.goals)
    L.push(`| ${g.name} | ${g.goal} | ${g.measured} | ${g.met === null ? 'not measured' : g.met ? 'yes' : '**NO**'} |`);
  L.push('');
  L.push(
    '## Throughput (median of rounds)',
    '',
    '| target | req/s | p50 ms | p99 ms | CPU µs/req (server under test) | loop delay p99.9 ms (median / worst) | idle Node on core 1, p99.9 ms | core0 / core1 busy | unexpected responses |',
    '|---|---|---|---|---|---|---|---|---|',
  );
  for (const [id, t] of Object.entries(s.throughput) as [TargetId, NonNullable<(typeof s.throughput)[TargetId]>][]) {
    const runs = r.load.filter((x) => x.target === id);
    const busy = [0, 1]
      .map((c) => Math.round((median(runs.map((x) => x.coreBusy[c] ?? NaN)) ?? 0) * 100) + '%')
      .join(' / ');
    L.push(
      `| ${TARGET_LABELS[id]} | ${fmt(t.rps)} | ${fmt(t.p50Ms)} | ${fmt(t.p99Ms)} | ${fmt(t.cpuUsPerReq)} | ${t.eldP999Ms === null ? '-' : `${t.eldP999Ms} / ${t.eldP999MsWorst}`} | ${fmt(t.eldIdleP999Ms)} | ${busy} | ${t.unexpectedResponses} |`,
    );
  }
  L.push(
    '',
    `Ratios (median of per-round): paid / nginx **${fmt(s.ratios.paidVsNginx)}**, paid / pass-through **${fmt(s.ratios.paidVsPassthrough)}**, pass-through / nginx ${fmt(s.ratios.passthroughVsNginx)}, paid / @fastify/http-proxy **${fmt(s.ratios.paidVsFastify)}**.`,
  );
  L.push(
    `CPU per request (median of per-round): paid / nginx **${fmt(s.cpuCost.paidOverNginx)}x**, paid / HAProxy-with-auth **${fmt(s.cpuCost.paidOverHaproxy)}x**, pass-through / nginx ${fmt(s.cpuCost.passthroughOverNginx)}x; metering (paid − pass-through) **${fmt(s.cpuCost.meteringUs)} µs**.`,
  );
  L.push(
    `The floors in the same rounds (bench/relay-floor.ts, no svc logic): bare relay / nginx ${fmt(s.cpuCost.relayFloorOverNginx)}x; metered relay (key hash + one committed row per call) / nginx ${fmt(s.cpuCost.meteredFloorOverNginx)}x, / HAProxy-with-auth ${fmt(s.cpuCost.meteredFloorOverHaproxy)}x; what its row and hash add ${fmt(s.cpuCost.floorMeteringUs)} µs. A target above its floor is reachable in this design; the gateway's distance from the floor is its own code.${
      s.cpuCost.spinFloorExtraUs == null
        ? ''
        : ` The spin floor (the bare relay + ${SPIN_FLOOR_US} µs of busy CPU per request, calibrated) cost ${fmt(s.cpuCost.spinFloorExtraUs)} µs more per request than the bare relay (${fmt(Math.round((s.cpuCost.spinFloorExtraUs / SPIN_FLOOR_US) * 100) / 100)}x its spin): what each µs of a server's own code weighed at saturation in this run.`
    }`,
  );
  const perCommit = s.cpuCost.paidCallsPerCommit;
  const atBatch = r.micro.ledgerAtPaidBatch;
  if (perCommit != null)
    L.push(
      `The paid runs committed ${fmt(perCommit)} calls per settle commit (median of rounds)${
        atBatch && !atBatch.error && atBatch.rowsPerCpuSec > 0
          ? `; the settle writer alone at ${atBatch.batch} calls per commit (the micro-benchmark below, no HTTP) spent ${fmt(Math.round((1e6 / atBatch.rowsPerCpuSec) * 10) / 10)} µs of CPU per call, beside metering's ${fmt(s.cpuCost.meteringUs)} µs`
          : ''
      }.`,
    );
  L.push(
    `From CPU per request instead (each server limited only by its own core): paid / nginx ${fmt(s.cpuRatios.paidVsNginx)}, paid / pass-through ${fmt(s.cpuRatios.paidVsPassthrough)}, pass-through / nginx ${fmt(s.cpuRatios.passthroughVsNginx)}.`,
    '',
  );
  L.push(
    `Other stores and servers (CPU per paid call, median of per-round ratios): PostgreSQL / SQLite **${fmt(s.cpuCost.pgOverSqlite)}x**, fallback HTTP server / native uWS **${fmt(s.cpuCost.fallbackOverNative)}x**. The PostgreSQL server itself (postmaster and backends, unpinned) spent ${fmt(s.throughput['paid-pg']?.backingCpuUsPerReq)} µs per paid call beside the gateway's ${fmt(s.throughput['paid-pg']?.cpuUsPerReq)} µs.`,
    '',
  );
  L.push(
    '| round | paid / nginx | paid / pass-through | pass-through / nginx | paid / @fastify/http-proxy |',
    '|---|---|---|---|---|',
  );
  for (const p of s.ratios.perRound)
    L.push(
      `| ${p.round} | ${fmt(p.paidVsNginx)} | ${fmt(p.paidVsPassthrough)} | ${fmt(p.passthroughVsNginx)} | ${fmt(p.paidVsFastify)} |`,
    );
  if (s.fixedRate) {
    L.push(
      '',
      `## Loop delay below saturation (fixed ${s.fixedRate.rate} req/s, ${r.fixedRate?.connections ?? '?'} connections, median of rounds)`,
      '',
    );
    L.push('| target | req/s | gateway loop delay p99.9 ms | idle Node on core 1, p99.9 ms |', '|---|---|---|---|');
    for (const [id, e] of Object.entries(s.fixedRate.eld) as [
      TargetId,
      NonNullable<(typeof s.fixedRate.eld)[TargetId]>,
    ][]) {
      L.push(`| ${TARGET_LABELS[id]} | ${fmt(e.rps)} | ${fmt(e.p999Ms)} | ${fmt(e.idleP999Ms)} |`);
    }
  }
  L.push(
    '',
    '## Added latency (one core, wrk -c1)',
    '',
    '| target | p50 µs | p99 µs | p99.9 µs | added p50 µs | added p99 µs | gateway loop delay max during run, ms |',
    '|---|---|---|---|---|---|---|',
  );
  for (const [id, t] of Object.entries(s.latency) as [TargetId, NonNullable<(typeof s.latency)[TargetId]>][]) {
    const a = s.added[id];
    L.push(
      `| ${TARGET_LABELS[id]} | ${fmt(t.p50Us)} | ${fmt(t.p99Us)} | ${fmt(t.p999Us)} | ${a ? fmt(a.p50Us) : '-'} | ${a ? fmt(a.p99Us) : '-'} | ${t.eldMaxMs === null ? '-' : t.eldMaxMs} |`,
    );
  }
  L.push('', '## Micro-benchmarks', '');
  const ka = r.micro.keyAuth;
  if (!ka && !r.micro.ledger) L.push('- Skipped in this run (`--skip-micro`).');
  if (ka)
    L.push(
      `- Key auth on a cache hit (gateway/steps/authenticate.ts + cache/key-cache.ts): ${ka?.error ? `not measured: ${ka.error}` : `${fmt(ka?.usPerOp)} µs/op wall-clock (${fmt(ka?.cpuUsPerOp)} µs/op of CPU time) over ${ka?.ops} ops; SHA-256 of the key alone ${fmt(ka?.sha256UsPerOp)} µs.`}`,
    );
  for (const l of [r.micro.ledger, ...(r.micro.ledgerSweep ?? []), r.micro.ledgerAtPaidBatch]) {
    if (!l) continue;
    L.push(
      l.error
        ? `- Ledger writer (batch ${l.batch}): not measured: ${l.error}`
        : `- Ledger writer (gateway/settle-writer.ts, ${l.batch} settles per commit, ${l.seconds} s, the gateway's checkpoint thread: PASSIVE once ${l.checkpointFrames ?? '?'} frames wait or every ${l.checkpointMs ?? '?'} ms, RESTART past ${l.walLimitBytes === undefined ? '?' : l.walLimitBytes / 1024 / 1024} MB): ` +
            `**${l.rowsPerSec} paid-call settles/s** wall-clock (${l.rowsPerCpuSec} per CPU-second; ${l.appendedRowsPerSec} appended rows/s, ${l.appendedPerSettle} per settle: a usage row per call, a ledger entry and a provider earning per commit), slowest 1-s window ${l.minWindowRowsPerSec}/s, ${l.rows} settles, ${l.checkpoints} checkpoints (slowest ${l.checkpointMsMax} ms, ${l.restarts ?? 0} WAL restarts), ` +
            `WAL peak ${(l.walMaxBytes / 1e6).toFixed(1)} MB, ledger consistent after run: ${l.consistent}. A plain one-table INSERT costs ${fmt(l.calibrationInsertUs)} µs of CPU on this machine.`,
    );
  }
  const wf = r.micro.walFrames;
  if (wf)
    L.push(
      wf.error
        ? `- WAL frames per commit: not measured: ${wf.error}`
        : `- WAL frames (4 KiB pages) per settle commit (bench/micro/wal-frames.bench.ts): ${wf.settle.map((x) => `${x.calls} call${x.calls === 1 ? '' : 's'}: ${x.frames} (${x.perCall} per call)`).join('; ')}; the commit floor's one-row commit: ${wf.commitFloorFrames}. ` +
            `One call's commit writes: ${wf.singleCallPages.join(', ')}. At one call in flight each paid call is its own commit, so this sets what the commit adds beside the floor.`,
    );
  const ub = r.micro.usageRowBytes;
  if (ub)
    L.push(
      `- Usage row (bench/micro/usage-row-bytes.bench.ts, ${ub.calls} calls, dbstat): ${ub.before.pagesBytesPerCall} page bytes per call before 0022_narrow_usage, ${ub.after.pagesBytesPerCall} after (payload ${ub.before.payloadPerCall} → ${ub.after.payloadPerCall}).`,
    );
  const pw = r.micro.pgWriter;
  if (pw) {
    const sq = r.micro.ledger;
    const sqUs = sq && !sq.error && sq.rowsPerCpuSec ? 1e6 / sq.rowsPerCpuSec : null;
    L.push(
      pw.error || pw.settlesPerSec === null
        ? `- PostgreSQL writer: not measured: ${pw.error ?? 'unknown'}`
        : `- PostgreSQL writer (gateway/pg/settle-writer.ts, ${pw.writers} gateway writer processes on one PostgreSQL 15, ${pw.outstanding} settles in flight each, ${pw.seconds} s, fsync and synchronous_commit on): ` +
            `**${pw.settlesPerSec} settles/s** (average batch ${pw.avgBatch}), writer CPU ${fmt(pw.writerCpuUsPerSettle ?? NaN)} µs/settle` +
            `${sqUs === null ? '' : ` (SQLite writer above: ${fmt(sqUs)} µs/settle, ratio ${fmt((pw.writerCpuUsPerSettle ?? NaN) / sqUs)})`}, ` +
            `PostgreSQL CPU ${fmt(pw.pgCpuUsPerSettle ?? NaN)} µs/settle, commit wait p50 ${pw.commitP50Ms} ms / p99 ${pw.commitP99Ms} ms, books consistent: ${pw.consistent}.`,
    );
  }
  if (r.mcp && !r.mcp.error) {
    L.push(
      '',
      `## MCP call_api against the relay floor (bench/phase-mcp.ts, ${r.mcp.seconds} s per row, 20 connections, the whole marketplace as npm start runs it, unpinned)`,
      '',
      '| row | req/s | p50 ms | p99 ms | front CPU µs/req (MCP or relay) | gateway CPU µs/req | non-2xx + errors |',
      '|---|---|---|---|---|---|---|',
    );
    for (const m of r.mcp.rows)
      L.push(
        `| ${m.name} | ${m.req_per_s} | ${m.p50_ms} | ${m.p99_ms} | ${fmt(m.mcp_cpu_us_per_req)} | ${m.gateway_cpu_us_per_req} | ${m.non2xx + m.errors} |`,
      );
    L.push(
      '',
      `MCP CPU per call_api / relay CPU per relayed call: ${fmt(r.mcp.cpuOverFloor.stateless)}x stateless, ${fmt(r.mcp.cpuOverFloor.session)}x session${
        r.mcp.cpuOverUndiciFloor
          ? ` (over the undici relay, the floor as issue 11 defined it: ${fmt(r.mcp.cpuOverUndiciFloor.stateless)}x, ${fmt(r.mcp.cpuOverUndiciFloor.session)}x)`
          : ''
      }. Load average ${r.mcp.loadAverage.start.join(' ')} → ${r.mcp.loadAverage.end.join(' ')}.`,
    );
  }
  if (r.profile.length) {
    L.push(
      '',
      '## Where the paid path spends CPU',
      '',
      'Self time in a separate 5 s load run on a gateway started with `--cpu-prof` (not part of the measured numbers), percent of non-idle CPU:',
      '',
    );
    L.push('| self % | function | where |', '|---|---|---|');
    for (const l of r.profile) L.push(`| ${l.percent} | \`${l.fn}\` | ${l.where} |`);
  }
  L.push('', '## Pre-measurement checks', '');
  for (const [id, c] of Object.entries(r.checks))
    L.push(`- ${TARGET_LABELS[id as TargetId]}: ${c.ok ? 'ok' : '**FAILED**'}: ${c.detail}`);
  if (r.integrity)
    L.push(
      '',
      '## Money after the run',
      '',
      `Paid gateway's database after it stopped: ${r.integrity.ok ? 'consistent' : '**INCONSISTENT**'}: ${r.integrity.detail}.`,
    );
  if (r.notes.length) L.push('', '## Skipped or changed', '', ...r.notes.map((n) => `- ${n}`));
  L.push('', `Raw numbers: \`bench/results/${r.file}\`.`, '');
  return L.join('\n');
}

/** The generated text with any hand-written notes of the existing RESULTS.md kept below the marker. */
export function withKeptNotes(generated: string, resultsPath: string): string {
  let notes = '';
  if (existsSync(resultsPath)) {
    const old = readFileSync(resultsPath, 'utf8');
    const i = old.indexOf(NOTES_MARKER);
    if (i >= 0) notes = old.slice(i + NOTES_MARKER.length);
  }
  return `${generated}\n${NOTES_MARKER}${notes || '\n'}`;
}
