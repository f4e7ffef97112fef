/**
 * CLI cold start (issue 12, item 9): `svc --version` against `node -e 0`, and `svc balance --json` against the same
 * request made with curl, all in one run on the same machine, interleaved so load drifts hit every command alike.
 * Targets: `svc --version` within 2x of `node -e 0`; `svc balance --json` within 2x of curl. The second cannot be met
 * by any Node program here (`node -e 0` alone is several times curl), so the run also times the floor a Node CLI can
 * reach: a minimal script making the same request with node:http, and reports svc against it.
 * Usage: `npm run bench:cli [-- --runs 30]`. Writes bench/results/cli-cold-start-<UTC stamp>.json.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { REPO, SVC_BIN, runSvc, startStack, tempHome } from '../test/helpers/cli.js';

const runsArg = process.argv.indexOf('--runs');
const RUNS = runsArg === -1 ? 20 : Number(process.argv[runsArg + 1]);

function timeMs(cmd: string, args: string[], env: NodeJS.ProcessEnv): number {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

async function main(): Promise<void> {
  const stack = await startStack();
  const { home, cleanup } = tempHome();
  try {
    const key = (await runSvc(['register', '--json'], { home, stack })).json().data.api_key as string;
    const env = { PATH: process.env.PATH ?? '', HOME: home, NO_COLOR: '1', SVC_API_URL: stack.control };
    // The least a Node program can do for the same answer: one node:http request, the body to stdout.
    const minimal = join(tmpdir(), `svc-bench-minimal-${process.pid}.mjs`);
    writeFileSync(
      minimal,
      `import { request } from 'node:http';\nrequest(${JSON.stringify(`${stack.control}/v1/billing/balance`)}, { headers: { authorization: ${JSON.stringify(`Bearer ${key}`)} } }, (r) => { const c = []; r.on('data', (d) => c.push(d)); r.on('end', () => process.stdout.write(Buffer.concat(c))); }).end();\n`,
    );
    const cases: Record<string, () => number> = {
      'node -e 0': () => timeMs(process.execPath, ['-e', '0'], env),
      'svc --version': () => timeMs(process.execPath, [SVC_BIN, '--version'], env),
      'curl balance': () =>
        timeMs('curl', ['-sf', '-H', `authorization: Bearer ${key}`, `${stack.control}/v1/billing/balance`], env),
      'node:http balance': () => timeMs(process.execPath, [minimal], env),
      'svc balance --json': () => timeMs(process.execPath, [SVC_BIN, 'balance', '--json'], env),
    };
    const samples: Record<string, number[]> = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
    for (const k of Object.keys(cases)) cases[k]!(); // warm the page cache once
    for (let i = 0; i < RUNS; i++) for (const [k, f] of Object.entries(cases)) samples[k]!.push(f());
    const summary = Object.fromEntries(
      Object.entries(samples).map(([k, xs]) => [
        k,
        { p50_ms: +pct(xs, 50).toFixed(1), p90_ms: +pct(xs, 90).toFixed(1) },
      ]),
    );
    const ratio = (a: string, b: string) => +(summary[a]!.p50_ms / summary[b]!.p50_ms).toFixed(2);
    const result = {
      at: new Date().toISOString(),
      runs: RUNS,
      node: process.version,
      summary,
      ratios: {
        version_vs_node: ratio('svc --version', 'node -e 0'),
        balance_vs_curl: ratio('svc balance --json', 'curl balance'),
        balance_vs_node: ratio('svc balance --json', 'node -e 0'),
        balance_vs_node_http: ratio('svc balance --json', 'node:http balance'),
        node_vs_curl: ratio('node -e 0', 'curl balance'),
      },
      targets: { version_vs_node: 2, balance_vs_curl: 2 },
    };
    const dir = join(REPO, 'bench/results');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `cli-cold-start-${result.at.replace(/[-:]/g, '').slice(0, 13)}Z.json`);
    writeFileSync(file, `${JSON.stringify({ ...result, samples }, null, 2)}\n`);
    for (const [k, v] of Object.entries(summary))
      console.log(`${k.padEnd(20)} p50 ${String(v.p50_ms).padStart(7)} ms   p90 ${String(v.p90_ms).padStart(7)} ms`);
    console.log(`svc --version / node -e 0        ${result.ratios.version_vs_node}x (target <= 2x)`);
    console.log(`svc balance --json / curl        ${result.ratios.balance_vs_curl}x (target <= 2x)`);
    console.log(`  node -e 0 / curl               ${result.ratios.node_vs_curl}x (the floor of any Node CLI)`);
    console.log(
      `svc balance --json / node:http   ${result.ratios.balance_vs_node_http}x (what the CLI adds over that floor)`,
    );
    console.log(`written ${file}`);
  } finally {
    cleanup();
    await stack.stop();
  }
}

await main();
