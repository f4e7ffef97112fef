/**
 * Picks the gateway's HTTP server at load time: a native uWebSockets.js build where one loads for this platform,
 * Node ABI and libc, else the JavaScript fallback (http-fallback.ts). SVC_GATEWAY_SERVER=native|fallback|auto
 * (default auto). The doctor (scripts/doctor.ts) reports the same probe, so what it prints is what the gateway runs.
 */
import { createRequire } from 'node:module';
import { dirname, join, sep } from 'node:path';
import type { HttpServerModule } from './http-api.js';
import { FALLBACK_SHARES_PORT, fallbackServer } from './http-fallback.js';

const require = createRequire(import.meta.url);

export type ServerMode = 'native' | 'fallback' | 'auto';

/** The npm builds of uWS, in the order tried. */
export const NATIVE_BUILDS = [
  {
    // The CI-tested build on Node 20 (glibc >= 2.17); binaries for Node 16/18/20 (ABI 93/108/115) only.
    pkg: 'uWebSockets.js',
    label: '@trufflesuite/uws-js-unofficial@20.30.0-unofficial.0 (uWS v20.30)',
    file: (abi: string) => `binaries/uws_${process.platform}_${process.arch}_${abi}.node`,
  },
  {
    // uWS v20.57: binaries for Node 20/22/24/25 (ABI 115/127/137/141); Linux ones need glibc >= 2.38.
    pkg: '@btc-vision/uwebsockets.js',
    label: '@btc-vision/uwebsockets.js@20.57.0 (uWS v20.57)',
    file: (abi: string) => `uws_${process.platform}_${process.arch}_${abi}.node`,
  },
] as const;

export interface NativeAttempt {
  build: string;
  file: string;
  loaded: boolean;
  /** Why it did not load (one line), when it did not. */
  why?: string;
}

export interface ServerChoice {
  kind: 'native' | 'fallback';
  server: HttpServerModule;
  /** The native build that runs (label and .node file), when native. */
  build?: string;
  why: string;
  cost: string;
  attempts: NativeAttempt[];
}

/** Where this choice is reported (the gateway's startup line, the doctor). */
export const NATIVE_COST = 'none: the reference server (uWS in C++)';
export const FALLBACK_COST =
  'more CPU per call than native uWS (HTTP/1.1 parsed in JavaScript; `npm run bench` row "gateway full paid path, fallback HTTP server"); same behaviour';

/** The glibc version this process runs on ('2.36'), or undefined (musl, macOS, Windows). */
export function glibcVersion(): string | undefined {
  if (process.platform !== 'linux') return undefined;
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
  return report?.header?.glibcVersionRuntime;
}

export function libcDescription(): string {
  if (process.platform !== 'linux') return `${process.platform} (no glibc)`;
  const g = glibcVersion();
  return g ? `glibc ${g}` : 'not glibc (musl?)';
}

function shortReason(e: unknown): string {
  const msg = e instanceof Error ? e.message : String(e);
  const glibc = /GLIBC_([0-9.]+)' not found/.exec(msg);
  if (glibc) return `needs glibc >= ${glibc[1]}, this system has ${libcDescription()}`;
  if (/Cannot find module|ENOENT/.test(msg)) return 'package not installed';
  return msg.split('\n')[0]!.slice(0, 200);
}

/** Tries every native build (stops at the first that loads unless `all`); never loads the packages' JS stand-ins. */
export function probeNative(opts: { all?: boolean } = {}): { loaded?: HttpServerModule; attempts: NativeAttempt[] } {
  const abi = process.versions.modules;
  const attempts: NativeAttempt[] = [];
  let loaded: HttpServerModule | undefined;
  for (const b of NATIVE_BUILDS) {
    const rel = b.file(abi);
    let dir: string;
    try {
      // The package root (its exports hide package.json): the folder named after it above its entry point.
      const main = require.resolve(b.pkg);
      const at = main.lastIndexOf(`${sep}${b.pkg.split('/').join(sep)}${sep}`);
      dir = at === -1 ? dirname(main) : main.slice(0, at + b.pkg.length + 1);
    } catch (e) {
      attempts.push({ build: b.label, file: rel, loaded: false, why: shortReason(e) });
      continue;
    }
    const file = join(dir, rel);
    const shown = `${b.pkg}/${rel}`;
    if (process.env.UWS_USE_FALLBACK === '1' || process.env.UWS_USE_FALLBACK?.toLowerCase() === 'true') {
      attempts.push({ build: b.label, file: shown, loaded: false, why: 'UWS_USE_FALLBACK is set' });
      continue;
    }
    try {
      const m = require(file) as HttpServerModule;
      if (typeof m.App !== 'function') throw new Error('not a uWS module (no App)');
      attempts.push({ build: b.label, file: shown, loaded: true });
      loaded ??= m;
      if (!opts.all) break;
    } catch (e) {
      const missing = (e as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND';
      attempts.push({
        build: b.label,
        file: shown,
        loaded: false,
        why: missing
          ? `no binary for ${process.platform}-${process.arch} Node ${process.versions.node.split('.')[0]} (ABI ${abi})`
          : shortReason(e),
      });
    }
  }
  return { loaded, attempts };
}

/** What would make a native build load here: said when SVC_GATEWAY_SERVER=native finds none. */
export function nativeRemedy(): string {
  if (process.env.UWS_USE_FALLBACK) return 'unset UWS_USE_FALLBACK';
  return (
    'a native build loads on Node 20 (x64/arm64 Linux with glibc >= 2.17, macOS, Windows), or on Node 22, 24 or 25 ' +
    'with glibc >= 2.38 (Ubuntu 24.04, Debian 13, Fedora 39+), macOS or Windows'
  );
}

/**
 * Loads the server to run. uWS reads its header cap from the environment when its module loads, so the cap is set
 * first (the fallback reads the same variable). Returns an Error, with what would help, when `native` finds none.
 */
export function chooseServer(mode: ServerMode, maxHeaderBytes: number): ServerChoice | Error {
  // uWS drops (no response) requests whose headers exceed its own limit; keep that limit well above ours so
  // oversized headers reach the handler and get a proper 431 instead.
  process.env.UWS_HTTP_MAX_HEADERS_SIZE = String(Math.max(maxHeaderBytes * 4, 64 * 1024));
  if (mode === 'fallback')
    return {
      kind: 'fallback',
      server: fallbackServer,
      why: 'SVC_GATEWAY_SERVER=fallback',
      cost: FALLBACK_COST,
      attempts: [],
    };
  const { loaded, attempts } = probeNative();
  const ok = attempts.find((a) => a.loaded);
  if (loaded && ok)
    return {
      kind: 'native',
      server: loaded,
      build: `${ok.build}, ${ok.file}`,
      why: mode === 'native' ? 'SVC_GATEWAY_SERVER=native' : 'a native build loads on this platform',
      cost: NATIVE_COST,
      attempts,
    };
  const tried = attempts.map((a) => `${a.build}: ${a.why}`).join('; ');
  if (mode === 'native')
    return new Error(
      `SVC_GATEWAY_SERVER=native, but no native uWS build loads here (${tried}). What would: ${nativeRemedy()}; or set SVC_GATEWAY_SERVER=auto to run the JavaScript fallback server.`,
    );
  return {
    kind: 'fallback',
    server: fallbackServer,
    why: `no native uWS build loads (${tried})`,
    cost: FALLBACK_COST,
    attempts,
  };
}

/**
 * The server to run with `workers` processes on one port, or why the gateway must not start. Checked by the
 * supervisor before it forks (so a refusal is said once, at once) and by each worker.
 */
export function serverFor(mode: ServerMode, maxHeaderBytes: number, workers: number): ServerChoice | Error {
  const choice = chooseServer(mode, maxHeaderBytes);
  if (choice instanceof Error) return choice;
  if (choice.kind === 'fallback' && workers > 1 && !FALLBACK_SHARES_PORT)
    return new Error(
      `the fallback server needs Node >= 22.12 to share one port between ${workers} workers (SO_REUSEPORT); set SVC_GATEWAY_WORKERS=1, use a newer Node, or run where a native uWS build loads`,
    );
  return choice;
}
