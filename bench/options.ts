/** Command-line options of `npm run bench [-- flags]`: a quick harness check or the recorded run. */
export interface BenchOptions {
  quick: boolean;
  /** Interleaved rounds of the throughput phase (every target once per round). */
  rounds: number;
  /** Seconds of autocannon load per target per round. */
  durationSec: number;
  connections: number;
  /** Seconds of `wrk -c1` per target per round in the latency phase. */
  latencySec: number;
  latencyRounds: number;
  /** Sustained duration of the ledger-writer micro-benchmark. */
  ledgerSec: number;
  /** Iterations of the key-auth micro-benchmark. */
  authOps: number;
  skipMicro: boolean;
  skipLoad: boolean;
  /** The MCP phase (bench/phase-mcp.ts): call_api against the relay floor. */
  skipMcp: boolean;
  /** Seconds per row of the MCP phase. */
  mcpSec: number;
  /** After the measured phases, a short load run on a `--cpu-prof` gateway to show where its CPU goes. */
  profile: boolean;
  /** Write bench/RESULTS.md (default: only for a full run). */
  record: boolean;
}

const USAGE = `npm run bench [-- --quick] [--rounds N] [--duration S] [--connections C] [--latency S] [--latency-rounds N]
                 [--ledger-seconds S] [--auth-ops N] [--skip-micro] [--skip-load] [--skip-mcp] [--mcp-seconds S] [--profile|--no-profile] [--record|--no-record]`;

export function parseOptions(argv: string[]): BenchOptions {
  const quick = argv.includes('--quick');
  const o: BenchOptions = {
    quick,
    rounds: quick ? 2 : 5,
    durationSec: quick ? 2 : 8,
    connections: 50,
    latencySec: quick ? 2 : 5,
    latencyRounds: quick ? 1 : 5,
    ledgerSec: quick ? 5 : 60,
    authOps: quick ? 200_000 : 2_000_000,
    skipMicro: false,
    skipLoad: false,
    skipMcp: false,
    mcpSec: quick ? 2 : 8,
    profile: !quick,
    record: !quick,
  };
  const num = (i: number, flag: string): number => {
    const v = Number(argv[i + 1]);
    if (!Number.isFinite(v) || v <= 0) throw new Error(`${flag} needs a positive number\n${USAGE}`);
    return v;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--quick') continue;
    else if (a === '--rounds') o.rounds = num(i++, a);
    else if (a === '--duration') o.durationSec = num(i++, a);
    else if (a === '--connections') o.connections = num(i++, a);
    else if (a === '--latency') o.latencySec = num(i++, a);
    else if (a === '--latency-rounds') o.latencyRounds = num(i++, a);
    else if (a === '--ledger-seconds') o.ledgerSec = num(i++, a);
    else if (a === '--auth-ops') o.authOps = num(i++, a);
    else if (a === '--skip-micro') o.skipMicro = true;
    else if (a === '--skip-load') o.skipLoad = true;
    else if (a === '--skip-mcp') o.skipMcp = true;
    else if (a === '--mcp-seconds') o.mcpSec = num(i++, a);
    else if (a === '--profile') o.profile = true;
    else if (a === '--no-profile') o.profile = false;
    else if (a === '--record') o.record = true;
    else if (a === '--no-record') o.record = false;
    else if (a === '--help' || a === '-h') throw new Error(USAGE);
    else throw new Error(`unknown option ${a}\n${USAGE}`);
  }
  return o;
}
