/**
 * `npm run doctor`: the first thing to run when svc will not start. Prints Node, libc, which HTTP server the gateway
 * would run (the same probe the gateway makes, server-choice.ts) and why, which better-sqlite3 build loads, and
 * whether the data dir is writable. Exit 1 when something would stop `npm start`. README "Node versions" lists what
 * each Node gets.
 */
import { accessSync, constants, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadConfig } from '../core/config.js';
import { loadGatewayConfig } from '../gateway/config.js';
import { chooseServer, libcDescription, nativeRemedy, probeNative } from '../gateway/server-choice.js';

let problems = 0;
const line = (label: string, text: string) => process.stdout.write(`${`${label}:`.padEnd(16)}${text}\n`);
const bad = (label: string, text: string) => {
  problems++;
  line(label, `PROBLEM: ${text}`);
};

const major = Number(process.versions.node.split('.')[0]);
line('node', `${process.versions.node} (ABI ${process.versions.modules}, ${process.platform}-${process.arch})`);
if (major < 20) bad('node', 'svc needs Node >= 20.18.1');
line('libc', libcDescription());

// The gateway's HTTP server: every native build's probe, then what SVC_GATEWAY_SERVER picks from them.
for (const a of probeNative({ all: true }).attempts)
  line('uws build', `${a.build}: ${a.loaded ? `loads (${a.file})` : `does not load: ${a.why}`}`);
let mode: 'native' | 'fallback' | 'auto' = 'auto';
let maxHeaderBytes = 8 * 1024;
try {
  const g = loadGatewayConfig();
  mode = g.server;
  maxHeaderBytes = g.maxHeaderBytes;
} catch (e) {
  bad('config', (e as Error).message);
}
const choice = chooseServer(mode, maxHeaderBytes);
if (choice instanceof Error) bad('gateway server', choice.message);
else {
  line('gateway server', `${choice.kind}${choice.build ? ` (${choice.build})` : ''} [SVC_GATEWAY_SERVER=${mode}]`);
  line('  why', choice.why);
  line('  cost', choice.cost);
  if (choice.kind === 'fallback') line('  native needs', nativeRemedy());
}

// SQLite: the Node-API build where this Node has Node-API 10, else better-sqlite3 12, compiled for one Node ABI
// (core/db/sqlite-driver.ts); a 12 tree installed under another Node fails here.
try {
  const { default: Sqlite, sqliteDriver: d } = await import('../core/db/sqlite-driver.js');
  const db = new Sqlite(':memory:');
  const version = db.prepare('select sqlite_version()').pluck().get() as string;
  db.close();
  const build = d.kind === 'node-api' ? 'Node-API build, prebuilt' : `built for ABI ${process.versions.modules}`;
  line('better-sqlite3', `${d.version} loads (${build}; SQLite ${version}) [${d.pkg}]`);
  line('  why', d.why);
} catch (e) {
  const msg = (e as Error).message;
  const abi = /NODE_MODULE_VERSION (\d+)/.exec(msg);
  bad(
    'better-sqlite3',
    abi
      ? `built for ABI ${abi[1]}, this Node is ABI ${process.versions.modules}: run \`npm rebuild better-sqlite3\` (or reinstall with this Node)`
      : msg.split('\n')[0]!,
  );
}

// The data dir: created if missing, then a file written and removed.
let dataDir = resolve(process.env.SVC_DATA_DIR || './data');
try {
  dataDir = loadConfig().dataDir;
} catch {
  /* reported above */
}
try {
  mkdirSync(dataDir, { recursive: true });
  accessSync(dataDir, constants.W_OK);
  const probe = join(dataDir, `.doctor-${process.pid}`);
  writeFileSync(probe, 'ok');
  rmSync(probe);
  line('data dir', `${dataDir} (writable)`);
} catch (e) {
  bad('data dir', `${dataDir} is not writable: ${(e as Error).message}`);
}

line('result', problems === 0 ? 'ok: `npm start` should start' : `${problems} problem(s) above`);
process.exit(problems === 0 ? 0 : 1);
