/**
 * A throwaway real PostgreSQL 15 for tests, with no system service assumed: Debian's initdb/pg_ctl
 * (`/usr/lib/postgresql/15/bin`, package `postgresql-15`) run in a temp dir on a free loopback port, `fsync=on`.
 * initdb refuses to run as root, so as root (CI) the binaries run as the `postgres` user the package creates
 * (scale-out-notes §3); as any other user they run as that user.
 *
 * - `startPostgres()` starts a cluster a test owns (and may crash-restart); `stop()` ends it and removes its files.
 * - `usePostgresDatabase()` gives each test file a fresh database (beforeAll) on the cluster of the run: the one the
 *   PG vitest project's global setup started (`SVC_TEST_PG_ADMIN_URL`), else a cluster of the file's own, stopped
 *   in afterAll.
 */
import { execFile, execFileSync } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll } from 'vitest';

const run = promisify(execFile);

export const PG_BIN = process.env.SVC_TEST_PG_BIN ?? '/usr/lib/postgresql/15/bin';

export interface PgCluster {
  host: string;
  port: number;
  /** The temp dir holding `data/`, the server log and the unix socket. */
  dir: string;
  /** `postgres://postgres@host:port/<database>`. */
  url(database?: string): string;
  /** A new empty database (the `svc_<n>` name if none is given); resolves with its URL. */
  createDatabase(name?: string): Promise<string>;
  dropDatabase(name: string): Promise<void>;
  /** Runs one SQL string through psql on `database` (default `postgres`), returning stdout (tuples only, `|`-separated). */
  psql(sqlText: string, database?: string): Promise<string>;
  /** `immediate` is a crash (no checkpoint, recovery at start); `fast` a clean shutdown. */
  restart(mode?: 'immediate' | 'fast'): Promise<void>;
  stop(): Promise<void>;
  /** The server log so far, for failure messages. */
  log(): Promise<string>;
  /** The postmaster's pid (its backends are its children; the bench reads the server's CPU from it); null when shared. */
  serverPid(): number | null;
}

export interface StartPostgresOptions {
  /** Address to listen on; `127.0.0.1` unless a namespace test gives its own. */
  listen?: string;
  port?: number;
  /** Extra `postgresql.conf` settings (`-c name=value`). */
  settings?: Record<string, string | number>;
  /** Extra pg_hba.conf lines appended before start (e.g. `host all all 10.210.0.0/24 trust`). */
  hba?: string[];
  /** A network namespace (`ip netns`) to run the server in (root only; the multi-host test). */
  netns?: string;
}

export function postgresAvailable(): boolean {
  return existsSync(join(PG_BIN, 'initdb')) && existsSync(join(PG_BIN, 'pg_ctl'));
}

const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/** Runs a PostgreSQL binary, as `postgres` when we are root. */
async function _pgRun(bin: string, args: string[], timeoutMs = 60_000, netns?: string): Promise<string> {
  const file = join(PG_BIN, bin);
  const su = ['su', 'postgres', '-s', '/bin/sh', '-c', [file, ...args].map(_shq).join(' ')];
  const res = asRoot
    ? netns
      ? await run('ip', ['netns', 'exec', netns, ...su], { timeout: timeoutMs, maxBuffer: 16 << 20 })
      : await run(su[0]!, su.slice(1), { timeout: timeoutMs, maxBuffer: 16 << 20 })
    : await run(file, args, { timeout: timeoutMs, maxBuffer: 16 << 20 });
  return res.stdout;
}

function _shq(s: string): string {
  return /^[A-Za-z0-9_./=:@,+-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`;
}

async function _freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, host, () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

let dbCounter = 0;

/** What every cluster offers from the client side (URLs, psql, databases), given where it listens. */
function _clientApi(host: string, port: number): Pick<PgCluster, 'url' | 'psql' | 'createDatabase' | 'dropDatabase'> {
  const url = (database = 'postgres') => `postgres://postgres@${host}:${port}/${database}`;
  const psql = async (sqlText: string, database = 'postgres') =>
    (
      await run(
        join(PG_BIN, 'psql'),
        ['-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-d', url(database), '-c', sqlText],
        { timeout: 60_000, maxBuffer: 64 << 20 },
      )
    ).stdout;
  return {
    url,
    psql,
    async createDatabase(name) {
      const db = name ?? `svc_${process.pid}_${++dbCounter}_${Date.now() % 1e6}`;
      await psql(`CREATE DATABASE "${db}"`);
      return url(db);
    },
    async dropDatabase(name) {
      await psql(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    },
  };
}

export async function startPostgres(opts: StartPostgresOptions = {}): Promise<PgCluster> {
  if (!postgresAvailable())
    throw new Error(`PostgreSQL 15 binaries not found in ${PG_BIN} (apt install postgresql-15)`);
  const host = opts.listen ?? '127.0.0.1';
  const dir = mkdtempSync(join(tmpdir(), 'svc-pg-'));
  if (asRoot) chownSync(dir, ...(await _postgresUid()));
  const data = join(dir, 'data');
  await _pgRun('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8', '-N']);
  if (opts.hba?.length) {
    appendFileSync(join(data, 'pg_hba.conf'), `${opts.hba.join('\n')}\n`);
  }
  const settings: Record<string, string | number> = {
    fsync: 'on',
    max_connections: 200,
    unix_socket_directories: dir,
    listen_addresses: host,
    ...opts.settings,
  };
  let port = opts.port ?? 0;
  const logFile = join(dir, 'pg.log');
  for (let attempt = 0; ; attempt++) {
    const p = port || (await _freePort(host));
    const o = [`-p ${p}`, ...Object.entries(settings).map(([k, v]) => `-c ${k}=${String(v)}`)].join(' ');
    try {
      await _pgRun('pg_ctl', ['-D', data, '-l', logFile, '-w', '-t', '60', '-o', o, 'start'], 60_000, opts.netns);
      port = p;
      break;
    } catch (e) {
      // Another process may have taken the free port between probe and bind: try another.
      if (opts.port || attempt >= 4) {
        const log = await run('cat', [logFile]).then(
          (r) => r.stdout,
          () => '',
        );
        rmSync(dir, { recursive: true, force: true });
        throw new Error(`pg_ctl start failed: ${(e as Error).message}\n${log}`);
      }
    }
  }
  let stopped = false;
  return {
    host,
    port,
    dir,
    ..._clientApi(host, port),
    async restart(mode = 'immediate') {
      await _pgRun('pg_ctl', ['-D', data, '-l', logFile, '-m', mode, '-w', '-t', '60', 'restart'], 60_000, opts.netns);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      try {
        await _pgRun('pg_ctl', ['-D', data, '-m', 'immediate', '-w', '-t', '30', 'stop'], 60_000, opts.netns);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    serverPid() {
      return Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
    },
    async log() {
      return run('cat', [logFile]).then(
        (r) => r.stdout,
        () => '',
      );
    },
  };
}

async function _postgresUid(): Promise<[number, number]> {
  const { stdout } = await run('id', ['-u', 'postgres']);
  const { stdout: g } = await run('id', ['-g', 'postgres']);
  return [Number(stdout.trim()), Number(g.trim())];
}

/** A URL's database name. */
export function databaseName(url: string): string {
  return decodeURIComponent(new URL(url).pathname.slice(1));
}

/**
 * The run's shared cluster when the PG project's global setup started one (`SVC_TEST_PG_ADMIN_URL`), as a
 * PgCluster whose stop() leaves the cluster running.
 */
function _sharedCluster(): PgCluster | null {
  const admin = process.env.SVC_TEST_PG_ADMIN_URL;
  if (!admin) return null;
  const u = new URL(admin);
  const host = u.hostname;
  const port = Number(u.port);
  return {
    host,
    port,
    dir: '',
    ..._clientApi(host, port),
    async restart() {
      throw new Error('the shared test cluster cannot be restarted: startPostgres() one of your own');
    },
    async stop() {},
    serverPid() {
      return null;
    },
    async log() {
      return '';
    },
  };
}

/** The run's shared cluster, or a new one of this file's own. */
export async function testCluster(): Promise<PgCluster> {
  return _sharedCluster() ?? startPostgres();
}

/**
 * A fresh database for this test file: `get()` returns its URL after beforeAll. Dropped (and the file's own
 * cluster stopped) in afterAll.
 */
export function usePostgresDatabase(): { get(): string; cluster(): PgCluster } {
  let cluster: PgCluster | undefined;
  let dbUrl: string | undefined;
  beforeAll(async () => {
    cluster = await testCluster();
    dbUrl = await cluster.createDatabase();
  }, 120_000);
  afterAll(async () => {
    if (cluster && dbUrl) await cluster.dropDatabase(databaseName(dbUrl)).catch(() => {});
    await cluster?.stop();
  });
  return {
    get() {
      if (!dbUrl) throw new Error('usePostgresDatabase: the database exists only after beforeAll');
      return dbUrl;
    },
    cluster() {
      if (!cluster) throw new Error('usePostgresDatabase: the cluster exists only after beforeAll');
      return cluster;
    },
  };
}

// ---- the two-store pass (vitest.pg.config.ts): every test data dir gets its own PostgreSQL database

/** True in the PostgreSQL pass: processes and test handles of a data dir use a database of their own. */
export function pgTestMode(): boolean {
  return process.env.SVC_TEST_STORE === 'postgres' && !!process.env.SVC_TEST_PG_ADMIN_URL;
}

const dataDirDatabases = new Map<string, string>();

/**
 * The PostgreSQL database standing for test data dir `dataDir` in the PG pass, created on first use (synchronously:
 * `baseEnv` is synchronous), on the run's cluster (SVC_TEST_PG_ADMIN_URL).
 */
export function databaseUrlFor(dataDir: string): string {
  const known = dataDirDatabases.get(dataDir);
  if (known) return known;
  const admin = process.env.SVC_TEST_PG_ADMIN_URL;
  if (!admin) throw new Error('databaseUrlFor: no test cluster (SVC_TEST_PG_ADMIN_URL)');
  const name = `svc_${process.pid}_${++dbCounter}_${Date.now() % 1e6}`;
  execFileSync(
    join(PG_BIN, 'psql'),
    ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', admin, '-c', `CREATE DATABASE "${name}"`],
    {
      timeout: 60_000,
    },
  );
  const u = new URL(admin);
  u.pathname = `/${name}`;
  dataDirDatabases.set(dataDir, u.toString());
  return u.toString();
}
