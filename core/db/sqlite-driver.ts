/**
 * The one place that loads better-sqlite3; every other module takes `Sqlite` from here, so a whole process (and
 * its worker threads) runs one build and `instanceof Sqlite.SqliteError` means the same class everywhere.
 *
 * Two builds of the same API are installed, and the Node that runs picks one:
 * - `better-sqlite3-napi` (better-sqlite3 13, Node-API 10, prebuilt in its npm package for Linux glibc and musl,
 *   macOS and Windows, x64 and arm64): on every Node with Node-API 10 (22.14+, 24, 26). Nothing is compiled at
 *   install, and it is immune to nodejs/node#65446: better-sqlite3 12 compiled against Node 24.19+'s headers
 *   aborts in a Statement's destructor during garbage collection (`Assertion failed: (env) != nullptr`).
 * - `better-sqlite3` 12 (V8 ABI, built for the Node that ran `npm install`): on Node 20 and 22.0-22.13, which have
 *   Node-API 9 only. 13 cannot load there (it segfaults), and its package says `node >= 22`.
 * The 13 build is an optional dependency: an install that skipped it (`--omit=optional`), or a platform its prebuilds
 * do not cover, runs 12 (`why` says which).
 */
import { createRequire } from 'node:module';
import type SqliteModule from 'better-sqlite3';

export type SqliteDriverKind = 'node-api' | 'v8-abi';

export interface SqliteDriver {
  /** The npm package loaded (its name under node_modules). */
  readonly pkg: 'better-sqlite3-napi' | 'better-sqlite3';
  readonly kind: SqliteDriverKind;
  /** better-sqlite3's own version of that build. */
  readonly version: string;
  /** Its entry file, for worker threads that load it by path (gateway/checkpointer.ts). */
  readonly entry: string;
  /** Why this build, in one line (`npm run doctor`). */
  readonly why: string;
}

const NAPI_BUILD_NEEDS = 10;
const require = createRequire(import.meta.url);

/** Loads one build (throws when that package is not installed). */
function _load(pkg: SqliteDriver['pkg'], kind: SqliteDriverKind, why: string) {
  const entry = require.resolve(pkg);
  const { version } = require(`${pkg}/package.json`) as { version: string };
  const driver: SqliteDriver = { pkg, kind, version, entry, why };
  return { driver, mod: require(entry) as typeof SqliteModule };
}

function _installed(pkg: string): boolean {
  try {
    require.resolve(`${pkg}/package.json`);
    return true;
  } catch {
    return false;
  }
}

function _choose(): { driver: SqliteDriver; mod: typeof SqliteModule } {
  const napi = Number(process.versions.napi ?? 0);
  if (napi < NAPI_BUILD_NEEDS)
    return _load(
      'better-sqlite3',
      'v8-abi',
      `this Node has Node-API ${napi} (< ${NAPI_BUILD_NEEDS}): the build compiled for this Node`,
    );
  let missing: string;
  try {
    const napiBuild = _load(
      'better-sqlite3-napi',
      'node-api',
      `this Node has Node-API ${napi} (>= ${NAPI_BUILD_NEEDS}): the prebuilt Node-API build`,
    );
    // The addon loads on first open: a platform its prebuilds do not cover fails here, not in the first request.
    new napiBuild.mod(':memory:').close();
    return napiBuild;
  } catch (e) {
    missing = _installed('better-sqlite3-napi')
      ? `does not load here (${String((e as Error).message).split('\n')[0]})`
      : 'is not installed (optional dependencies omitted?)';
  }
  return _load(
    'better-sqlite3',
    'v8-abi',
    `this Node has Node-API ${napi}, but better-sqlite3-napi ${missing}: the build compiled for this Node`,
  );
}

const chosen = _choose();

/** better-sqlite3's Database constructor (with `SqliteError` on it), from the build this Node runs. */
const Sqlite: typeof SqliteModule = chosen.mod;
// The types travel with the value, so `import Sqlite from './sqlite-driver.js'` reads as `import Sqlite from
// 'better-sqlite3'` did: `Sqlite.Database`, `Sqlite.Statement` and the rest are better-sqlite3's own.
// biome-ignore lint/suspicious/noRedeclare: a type-only namespace merged with the value above
declare namespace Sqlite {
  export type Database = SqliteModule.Database;
  export type Statement<P extends unknown[] | {} = unknown[], R = unknown> = SqliteModule.Statement<P, R>;
  export type Options = SqliteModule.Options;
  export type SqliteError = SqliteModule.SqliteError;
  export type RunResult = SqliteModule.RunResult;
}
export default Sqlite;
export const sqliteDriver: SqliteDriver = chosen.driver;
