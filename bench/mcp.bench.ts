/**
 * MCP row of the bench: `tools/call` of get_balance and of call_api (free endpoint) through MCP, both protocol eras,
 * over 20 connections, beside the direct REST balance call and the direct gateway call, in the same run.
 * Then the per-call overhead at a load both paths sustain: for each era, the direct gateway call and MCP call_api at
 * the same fixed rate (open loop, bench/paced.ts), FIXED_RATE_SHARES of that era's saturated MCP req/s
 * from the same run; "added" = MCP − direct at that rate. (At saturation a closed loop's latency is connections /
 * throughput, so the saturated rows' p99 mostly restates their req/s; bench/README.md.)
 * `npm run build && node dist/bench/mcp.bench.js [seconds]` → bench/results/mcp-<ts>.json and a table on stdout.
 */
import autocannon from 'autocannon';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './setup.js';
import { spawn } from 'node:child_process';
import { cpuMicros, processTree, stopChild } from './procs.js';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { freePort } from './nginx.js';
import { pacedLoad, type PacedSpec } from './paced.js';
import { MCP_FLOOR_ROW, MCP_UNDICI_FLOOR_ROW } from './phase-mcp.js';

const SECONDS = Number(process.argv[2] ?? 5);
const CONNECTIONS = 20;
const MODERN = '2026-07-28';
/**
 * The fixed-rate pairs run at these shares of the era's saturated MCP call_api req/s (`MCP_BENCH_SHARES=0.1,0.5`).
 * At half of saturation this 2-core machine is nearly busy (MCP, gateway, control plane and the load generator
 * share it), so the pair there mostly measures queueing; the lower share shows MCP's own added latency.
 */
const FIXED_RATE_SHARES = (process.env.MCP_BENCH_SHARES ?? '0.1,0.5')
  .split(',')
  .filter((s) => s.trim() !== '')
  .map(Number);

export interface McpRow {
  name: string;
  req_per_s: number;
  p50_ms: number;
  p99_ms: number;
  errors: number;
  non2xx: number;
  /** CPU time (user+sys) of the MCP process per request answered; null for rows that do not touch it. */
  mcp_cpu_us_per_req: number | null;
  /** CPU time of the gateway (its process tree: workers, checkpoint thread) per request answered. */
  gateway_cpu_us_per_req: number;
  /** CPU time of the whole marketplace (every process `npm start` runs) per request answered. */
  all_cpu_us_per_req: number;
}

/** MCP call_api minus the direct gateway call, both at the same fixed rate in the same run. */
interface AddedLatency {
  era: string;
  share_of_saturated: number;
  rate_per_s: number;
  added_p50_ms: number;
  added_p99_ms: number;
}

/**
 * Seconds of unmeasured call_api load (each era) through MCP, and of relayed calls through the floor relay, before
 * their measured rows (`MCP_BENCH_WARMUP_SECONDS`, 0 = none). Without it the first measured row carries the
 * process's JIT warm-up: with MCP_BENCH_ONLY (bench/phase-mcp.ts) that row is the session era's, which read ~1.5x
 * the CPU per call it reads warm, and the stateless era's did the same when run first (issue 28).
 */
const WARMUP_SECONDS = Number(process.env.MCP_BENCH_WARMUP_SECONDS ?? 2);

/**
 * `MCP_BENCH_CPU_AT_RATE=<req/s>` adds rows of call_api (each era) and of the floor relay at that one fixed rate
 * (open loop): CPU per call falls as throughput rises (more requests per event-loop turn and per syscall), so the
 * saturated rows compare MCP with a floor running at a higher req/s; these compare both at the same rate.
 */
const CPU_AT_RATE = Number(process.env.MCP_BENCH_CPU_AT_RATE ?? 0);
const atRate = (name: string) => `${name} @ ${CPU_AT_RATE}/s fixed, same rate for MCP and floor`;

/** `MCP_BENCH_ONLY=<regex>` runs only the matching rows (for profiling one of them). */
const ONLY = process.env.MCP_BENCH_ONLY ? new RegExp(process.env.MCP_BENCH_ONLY) : undefined;

/**
 * Pids measured for CPU per request: the MCP process, the gateway, the supervisor (the whole marketplace), and the
 * floor relay (bench/mcp-floor-relay.ts; its CPU is reported in the MCP column of its row, and in the all column).
 */
const pids = { mcp: 0, gateway: 0, all: 0, relay: 0 };
/** Floor rows (both relays' names start so): their CPU is the relay's, not MCP's. */
const isFloor = (name: string) => name.startsWith('floor:');

type Measured = Pick<McpRow, 'req_per_s' | 'p50_ms' | 'p99_ms' | 'errors' | 'non2xx'> & { answered: number };

/** A saturating closed loop: CONNECTIONS connections, each sending its next request when the last is answered. */
const closedLoop = (o: autocannon.Options) => async (): Promise<Measured> => {
  const r = await autocannon({ connections: CONNECTIONS, duration: SECONDS, ...o });
  return {
    answered: r.requests.total,
    req_per_s: Math.round(r.requests.average),
    p50_ms: r.latency.p50,
    p99_ms: r.latency.p99,
    errors: r.errors,
    non2xx: r.non2xx,
  };
};

/** An open loop at a fixed rate over CONNECTIONS connections (bench/paced.ts). */
const fixedRate = (o: Omit<PacedSpec, 'seconds' | 'connections'>) => async (): Promise<Measured> => {
  const r = await pacedLoad({ ...o, seconds: SECONDS, connections: CONNECTIONS });
  return { ...r, errors: r.errors + (r.sent - r.answered - r.errors) };
};

async function load(name: string, run: () => Promise<Measured>): Promise<McpRow | undefined> {
  if (ONLY && !ONLY.test(name)) return undefined;
  const front = isFloor(name) ? pids.relay : pids.mcp;
  const cpu = () => ({ front: cpuMicros(front), gateway: cpuMicros(pids.gateway), all: cpuMicros(pids.all) });
  const before = cpu();
  const r = await run();
  const after = cpu();
  const answered = Math.max(1, r.answered);
  return {
    name,
    req_per_s: r.req_per_s,
    p50_ms: r.p50_ms,
    p99_ms: r.p99_ms,
    errors: r.errors,
    non2xx: r.non2xx,
    mcp_cpu_us_per_req:
      name.startsWith('MCP') || isFloor(name) ? Math.round((after.front - before.front) / answered) : null,
    gateway_cpu_us_per_req: Math.round((after.gateway - before.gateway) / answered),
    all_cpu_us_per_req: Math.round(
      (after.all - before.all + (isFloor(name) ? after.front - before.front : 0)) / answered,
    ),
  };
}

/** The first process under the supervisor whose command line runs `entry` (e.g. mcp/main.js). */
function pidOf(root: number, entry: string): number {
  for (const p of processTree(root)) {
    try {
      if (readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(entry)) return p;
    } catch {
      /* exited */
    }
  }
  throw new Error(`no ${entry} process under the supervisor`);
}

const rpc = (name: string, args: Record<string, unknown>, modern: boolean) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: '[<id>]',
    method: 'tools/call',
    params: {
      name,
      arguments: args,
      ...(modern
        ? {
            _meta: {
              'io.modelcontextprotocol/protocolVersion': MODERN,
              'io.modelcontextprotocol/clientCapabilities': {},
            },
          }
        : {}),
    },
  });

async function main(): Promise<void> {
  const data = mkdtempSync(join(tmpdir(), 'svc-bench-mcp-'));
  const [control, gateway, mcp, demo] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  const env = {
    ...process.env,
    SVC_DATA_DIR: data,
    SVC_ENV: 'development',
    SVC_LOG_LEVEL: 'warn',
    SVC_CONTROL_PORT: String(control),
    SVC_GATEWAY_PORT: String(gateway),
    SVC_MCP_PORT: String(mcp),
    SVC_DEMO_UPSTREAM_PORT: String(demo),
    SVC_GATEWAY_DEFAULT_RATE_PER_MIN: '100000000',
  };
  // The whole marketplace as `npm start` runs it; ready once both health checks answer.
  const all = { child: spawn(process.execPath, [join(ROOT, 'dist/scripts/start.js')], { env, stdio: 'ignore' }) };
  try {
    const base = `http://127.0.0.1:${control}`;
    const gw = `http://127.0.0.1:${gateway}`;
    const mcpUrl = `http://127.0.0.1:${mcp}/mcp`;
    // Up to 90 s: on a busy machine `npm start` (four processes, migrations, the demo seed) takes a while.
    let ready = false;
    for (let i = 0; i < 450 && !ready; i++) {
      const ok = await fetch(`${base}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      const mok = await fetch(`http://127.0.0.1:${mcp}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      ready = ok && mok;
      if (!ready) await new Promise((r) => setTimeout(r, 200));
    }
    if (!ready) throw new Error('the marketplace (npm start) was not ready in 90 s');
    pids.all = all.child.pid!;
    pids.mcp = pidOf(pids.all, 'mcp/main.js');
    pids.gateway = pidOf(pids.all, 'gateway/main.js');
    const loadAtStart = loadavg().map((x) => Math.round(x * 100) / 100);
    const { api_key: key } = (await (await fetch(`${base}/v1/register`, { method: 'POST' })).json()) as {
      api_key: string;
    };
    const auth = { authorization: `Bearer ${key}` };
    const json = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const init = await fetch(mcpUrl, {
      method: 'POST',
      headers: { ...json, ...auth },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
      }),
    });
    const session = init.headers.get('mcp-session-id')!;
    const legacy = { ...json, 'mcp-protocol-version': '2025-11-25', 'mcp-session-id': session };
    const modern = (tool: string) => ({
      ...json,
      ...auth,
      'mcp-protocol-version': MODERN,
      'mcp-method': 'tools/call',
      'mcp-name': tool,
    });
    const call = { slug: 'demo-weather', endpoint: '/current', input: { city: 'lisbon' } };
    const post = { method: 'POST' as const, idReplacement: true };
    const rows: (McpRow | undefined)[] = [];
    const mcpLoad = (headers: Record<string, string>, body: string) =>
      closedLoop({ url: mcpUrl, ...post, headers, body });
    rows.push(
      await load('REST GET /v1/billing/balance', closedLoop({ url: `${base}/v1/billing/balance`, headers: auth })),
    );
    rows.push(await load('MCP get_balance (2025-11-25, session)', mcpLoad(legacy, rpc('get_balance', {}, false))));
    rows.push(
      await load(
        'MCP get_balance (2026-07-28, stateless)',
        mcpLoad(modern('get_balance'), rpc('get_balance', {}, true)),
      ),
    );
    const gatewayCall = { url: `${gw}/demo-weather/current?city=lisbon`, headers: auth };
    rows.push(await load('gateway GET /demo-weather/current', closedLoop(gatewayCall)));
    // The direct call with the Idempotency-Key every MCP call_api sends: the gateway's claim/replay record alone.
    rows.push(
      await load(
        'gateway GET /demo-weather/current + Idempotency-Key',
        closedLoop({ ...gatewayCall, headers: { ...auth, 'idempotency-key': 'bench-[<id>]' }, idReplacement: true }),
      ),
    );
    const eras = [
      { era: '2025-11-25, session', headers: legacy, body: rpc('call_api', call, false) },
      { era: '2026-07-28, stateless', headers: modern('call_api'), body: rpc('call_api', call, true) },
    ];
    const warm = (o: autocannon.Options) =>
      WARMUP_SECONDS > 0 ? closedLoop({ ...o, duration: WARMUP_SECONDS })() : Promise.resolve();
    for (const e of eras) {
      if (!ONLY || ONLY.test(`MCP call_api (${e.era})`))
        await warm({ url: mcpUrl, ...post, headers: e.headers, body: e.body });
    }
    for (const e of eras) rows.push(await load(`MCP call_api (${e.era})`, mcpLoad(e.headers, e.body)));
    // Fresh JSON-RPC ids for the fixed-rate rows: a repeated one would be an idempotent replay, not a call.
    const rateBody = (body: string) => {
      const tag = `rate-${Date.now()}`;
      return (i: number) => body.replace('[<id>]', `${tag}-${i}`);
    };
    if (CPU_AT_RATE > 0) {
      for (const e of eras) {
        const run = fixedRate({
          url: mcpUrl,
          method: 'POST',
          headers: e.headers,
          body: rateBody(e.body),
          rate: CPU_AT_RATE,
        });
        rows.push(await load(atRate(`MCP call_api (${e.era})`), run));
      }
    }
    // The same gateway call relayed by a bare node:http process: what MCP's front costs at the least, with MCP's own
    // hop client (the floor) and with undici (the floor as issue 11 defined it).
    for (const [floorRow, client] of [
      [MCP_FLOOR_ROW, 'svc'],
      [MCP_UNDICI_FLOOR_ROW, 'undici'],
    ] as const) {
      if (ONLY && !ONLY.test(floorRow)) continue;
      const relayPort = await freePort();
      const relay = spawn(
        process.execPath,
        [
          // SVC_MCP_CPU_PROF_DIR profiles the MCP process (scripts/start.ts) and, beside it, the floor relay.
          ...(process.env.SVC_MCP_CPU_PROF_DIR
            ? ['--cpu-prof', `--cpu-prof-dir=${process.env.SVC_MCP_CPU_PROF_DIR}`]
            : []),
          join(ROOT, 'dist/bench/mcp-floor-relay.js'),
          String(relayPort),
          gatewayCall.url,
          key,
          client,
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      try {
        await new Promise<void>((resolve, reject) => {
          relay.stdout!.once('data', () => resolve());
          relay.once('exit', () => reject(new Error('the floor relay exited')));
        });
        pids.relay = relay.pid!;
        const floorLoad = {
          url: `http://127.0.0.1:${relayPort}/`,
          ...post,
          headers: json,
          body: rpc('call_api', call, false),
        };
        await warm(floorLoad);
        rows.push(await load(floorRow, closedLoop(floorLoad)));
        if (CPU_AT_RATE > 0) {
          const run = fixedRate({ ...floorLoad, method: 'POST', body: rateBody(floorLoad.body), rate: CPU_AT_RATE });
          rows.push(await load(atRate(floorRow), run));
        }
      } finally {
        await stopChild(relay);
      }
    }

    // Per-call overhead at a load both paths sustain: open loop, the same fixed rate for the pair.
    const added: AddedLatency[] = [];
    for (const share of FIXED_RATE_SHARES)
      for (const e of eras) {
        const saturated = rows.find((r) => r?.name === `MCP call_api (${e.era})`);
        if (!saturated) continue;
        const rate = Math.max(50, Math.round(saturated.req_per_s * share));
        const direct = await load(
          `gateway GET /demo-weather/current @ ${rate}/s fixed (${e.era} pair)`,
          fixedRate({ ...gatewayCall, method: 'GET', rate }),
        );
        // Fresh JSON-RPC ids: a repeated one would be an idempotent replay, not a call.
        const tag = `fixed-${Date.now()}`;
        // The direct call with the unique Idempotency-Key every MCP call_api sends: what the gateway's idempotent path
        // adds at this rate, apart from the MCP process.
        const directIdem = await load(
          `gateway GET /demo-weather/current + Idempotency-Key @ ${rate}/s fixed (${e.era} pair)`,
          fixedRate({
            ...gatewayCall,
            method: 'GET',
            rate,
            extraHeaders: (i) => ({ 'idempotency-key': `${tag}-${i}` }),
          }),
        );
        rows.push(directIdem);
        const viaMcp = await load(
          `MCP call_api (${e.era}) @ ${rate}/s fixed`,
          fixedRate({
            url: mcpUrl,
            method: 'POST',
            headers: e.headers,
            body: (i) => e.body.replace('[<id>]', `${tag}-${i}`),
            rate,
          }),
        );
        rows.push(direct, viaMcp);
        if (direct && viaMcp) {
          added.push({
            era: e.era,
            share_of_saturated: share,
            rate_per_s: rate,
            added_p50_ms: Math.round((viaMcp.p50_ms - direct.p50_ms) * 100) / 100,
            added_p99_ms: Math.round((viaMcp.p99_ms - direct.p99_ms) * 100) / 100,
          });
        }
      }
    const result = {
      at: new Date().toISOString(),
      seconds: SECONDS,
      connections: CONNECTIONS,
      load_average: { start: loadAtStart, end: loadavg().map((x) => Math.round(x * 100) / 100) },
      // SVC_MCP_FAST_TOOL_CALLS=off (inherited by the MCP process) measures the SDK path for tools/call
      mcp_fast_tool_calls: process.env.SVC_MCP_FAST_TOOL_CALLS !== 'off',
      caveat:
        'machine shared with other work during the run; absolute numbers are low-confidence, ratios between rows of one run and CPU per request less so',
      rows: rows.filter((r) => r !== undefined),
      fixed_rate_shares: FIXED_RATE_SHARES,
      added_latency_at_fixed_rate: added,
    };
    const dir = join(ROOT, 'bench/results');
    mkdirSync(dir, { recursive: true });
    // MCP_BENCH_OUT: where `npm run bench`'s MCP phase (bench/phase-mcp.ts) reads this run back.
    const file =
      process.env.MCP_BENCH_OUT ??
      join(dir, `mcp-${result.at.replace(/[:.]/g, '').slice(0, 17)}Z${result.mcp_fast_tool_calls ? '' : '-sdk'}.json`);
    writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
    console.table(result.rows);
    if (added.length) console.table(added);
    console.log(`written ${file}`);
  } finally {
    await stopChild(all.child);
  }
}

await main();
