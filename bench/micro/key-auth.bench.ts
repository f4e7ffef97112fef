/**
 * Micro-benchmark of the gateway's key authentication on a cache hit (gateway/steps/authenticate.ts over
 * gateway/cache/key-cache.ts): SHA-256 of the key, LRU lookup, revoked/scope/org checks. Prints one JSON line.
 */
import { hash } from 'node:crypto';
import { openDatabase } from '../../core/db/database.js';
import { microDb, importGateway } from './micro-db.js';

export interface KeyAuthResult {
  /** Wall-clock µs per op (what the goal is judged on). */
  usPerOp: number;
  /** CPU µs per op of this process: the same loop without the time other processes took the core. */
  cpuUsPerOp: number;
  ops: number;
  /** crypto.hash('sha256') alone, the floor of any key lookup. */
  sha256UsPerOp: number;
  keysInCache: number;
  error?: string;
}

interface AuthModule {
  authenticate(authorization: string, xSvcKey: string, keys: unknown): { ok: boolean };
}
interface CacheModule {
  KeyCache: new (sqlite: unknown, max?: number) => unknown;
}

let _lastCpuUs = 0;

function _time(ops: number, fn: (i: number) => void): number {
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < ops; i++) fn(i);
  const wall = Number(process.hrtime.bigint() - t0) / 1000 / ops;
  const c = process.cpuUsage(c0);
  _lastCpuUs = (c.user + c.system) / ops;
  return wall;
}

async function _main(): Promise<void> {
  const ops = Number(process.argv[2] ?? '1000000');
  const m = await microDb(1000);
  const h = openDatabase(m.file);
  try {
    const { authenticate } = await importGateway<AuthModule>('steps/authenticate.js');
    const { KeyCache } = await importGateway<CacheModule>('cache/key-cache.js');
    const cache = new KeyCache(h.sqlite);
    const header = `Bearer ${m.consumer.key}`;
    if (!authenticate(header, '', cache).ok) throw new Error('authenticate() rejected the seeded key');
    // Warm up (JIT, cache fill), then measure a cache hit per op.
    _time(Math.min(ops, 200_000), () => authenticate(header, '', cache));
    let okCount = 0;
    const usPerOp = _time(ops, () => {
      if (authenticate(header, '', cache).ok) okCount++;
    });
    const cpuUsPerOp = _lastCpuUs;
    if (okCount !== ops) throw new Error(`only ${okCount}/${ops} authenticated`);
    const sha256UsPerOp = _time(ops, () => hash('sha256', m.consumer.key, 'hex'));
    const out: KeyAuthResult = {
      usPerOp: Math.round(usPerOp * 1000) / 1000,
      cpuUsPerOp: Math.round(cpuUsPerOp * 1000) / 1000,
      ops,
      sha256UsPerOp: Math.round(sha256UsPerOp * 1000) / 1000,
      keysInCache: 1,
    };
    process.stdout.write(JSON.stringify(out) + '\n');
  } catch (e) {
    process.stdout.write(
      JSON.stringify({
        usPerOp: NaN,
        cpuUsPerOp: NaN,
        ops: 0,
        sha256UsPerOp: NaN,
        keysInCache: 0,
        error: (e as Error).message,
      }) + '\n',
    );
  } finally {
    h.close();
    m.cleanup();
  }
}

void _main();
