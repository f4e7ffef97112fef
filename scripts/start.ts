/**
 * `npm start`: the whole marketplace on one machine. Migrates the SQLite file once, then runs the demo upstream
 * (when SVC_DEMO), the control plane, the gateway and the MCP server as child processes on loopback ports.
 * Ctrl-C / SIGTERM stops them all; if one dies, the rest are stopped too and the exit code is 1.
 * Children get an IPC channel, so they stop by themselves when this supervisor dies without a chance to signal them
 * (core/lifecycle.ts); and the supervisor stops when the process that started it (npm) is gone.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { loadConfigOrExit } from '../core/config.js';
import { openStore } from '../core/db/database.js';
import { migrateToLatest } from '../core/db/migrate.js';
import { onStop } from '../core/lifecycle.js';

const DIST = join(dirname(fileURLToPath(import.meta.url)), '..');
const config = loadConfigOrExit();

const handles = openStore(config);
await migrateToLatest(handles.db);
await handles.close();

interface Child {
  name: string;
  proc: ChildProcess;
  url?: string;
  metricsUrl?: string;
}
const children: Child[] = [];
let stopping = false;

/**
 * SVC_MCP_CPU_PROF_DIR (profiling only, e.g. bench/mcp.bench.ts): the MCP process runs under `--cpu-prof` and writes
 * its profile there when it stops. NODE_OPTIONS cannot carry `--cpu-prof`, and would profile every process.
 */
const mcpProfDir = process.env.SVC_MCP_CPU_PROF_DIR;
const nodeArgsOf = (entry: string) =>
  mcpProfDir && entry === 'mcp/main.js' ? ['--cpu-prof', `--cpu-prof-dir=${mcpProfDir}`] : [];

function start(name: string, entry: string, env: NodeJS.ProcessEnv = process.env): Promise<Child> {
  const proc = spawn(process.execPath, [...nodeArgsOf(entry), join(DIST, entry)], {
    env,
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  const child: Child = { name, proc };
  children.push(child);
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: proc.stdout! });
    rl.on('line', (line) => {
      try {
        const msg = JSON.parse(line) as { ready?: string; url?: string; metrics_url?: string };
        if (msg.ready && msg.url) {
          child.url = msg.url;
          child.metricsUrl = msg.metrics_url;
          resolve(child);
          return;
        }
      } catch {
        /* plain output */
      }
      process.stdout.write(`[${name}] ${line}\n`);
    });
    proc.once('exit', (code, signal) => {
      if (!child.url) reject(new Error(`${name} exited (${code ?? signal}) before it was ready`));
      else if (!stopping) {
        process.stderr.write(`svc: ${name} stopped unexpectedly (${code ?? signal}); stopping the rest\n`);
        void stopAll(1);
      }
    });
  });
}

async function stopAll(code: number): Promise<void> {
  stopping = true;
  await Promise.all(
    children.map(
      (c) =>
        new Promise<void>((resolve) => {
          if (c.proc.exitCode !== null || c.proc.signalCode !== null) return resolve();
          const t = setTimeout(() => c.proc.kill('SIGKILL'), 5000);
          c.proc.once('exit', () => {
            clearTimeout(t);
            resolve();
          });
          c.proc.kill('SIGTERM');
        }),
    ),
  );
  process.exit(code);
}
onStop(() => void stopAll(0));
// `npm start` execs this script (package.json), so npm forwards SIGTERM/SIGINT here. If npm itself is killed with
// SIGKILL this process is re-parented: notice that and stop everything rather than keep the ports serving.
const startedBy = process.ppid;
setInterval(() => {
  if (process.ppid !== startedBy) void stopAll(0);
}, 1000).unref();

try {
  let controlEnv: NodeJS.ProcessEnv = process.env;
  const demo = config.demo && existsSync(join(DIST, 'demo/upstream.js'));
  if (demo) {
    const demo = await start('demo-upstream', 'demo/upstream.js');
    // With SVC_DEMO_UPSTREAM_PORT=0 the upstream picked a free port: the demo listing (and the gateway) must know it.
    controlEnv = { ...process.env, SVC_DEMO_UPSTREAM_PORT: new URL(demo.url!).port };
  }
  const [control, gateway, mcp] = await Promise.all([
    start('control', 'control/main.js', controlEnv),
    // The gateway's egress rule lets the demo upstream's port through in production: it must know the picked port.
    start('gateway', 'gateway/main.js', controlEnv),
    start('mcp', 'mcp/main.js'),
  ]);
  process.stdout.write(
    [
      '',
      `svc is running (${config.env}, data in ${config.dataDir})`,
      `  web            ${control.url}/   (catalog, sign-in, dashboard, provider area)`,
      `  control plane  ${control.url}/v1   (OpenAPI: ${control.url}/v1/openapi.json)`,
      `  gateway        ${gateway.url}`,
      `  MCP            ${mcp.url}/mcp`,
      `  metrics        ${[control, gateway, mcp].map((c) => c.metricsUrl ?? 'off').join('  ')}`,
      '',
      // Without the demo listing these commands would only find nothing: the banner shows them only with it.
      ...(demo
        ? [
            'First call:',
            `  KEY=$(curl -s -X POST ${control.url}/v1/register | node -pe 'JSON.parse(require("fs").readFileSync(0)).api_key')`,
            `  curl -s "${control.url}/v1/catalog/search?query=weather" -H "authorization: Bearer $KEY"`,
            `  curl -si "${gateway.url}/demo-weather/current?city=lisbon" -H "authorization: Bearer $KEY"`,
            '',
          ]
        : []),
      'Ctrl-C stops everything.',
      '',
    ].join('\n'),
  );
} catch (e) {
  process.stderr.write(`svc: ${(e as Error).message}\n`);
  await stopAll(1);
}
