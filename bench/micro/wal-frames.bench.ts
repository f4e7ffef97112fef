/**
 * Pages one commit writes to the WAL (issue 28's added-latency target): each WAL frame is a 4 KiB page the COMMIT
 * writes (two `pwrite`s) and the checkpoint later copies back, so at one call in flight, where every paid call is its
 * own commit, frames per commit set most of what the commit adds to a call. Measured on a migrated file after 3,000
 * settled calls (so b-trees are past their first pages): the gateway's settle transaction (gateway/settle-writer.ts)
 * for batches of 1, 16 and 128 calls, each b-tree named (`dbstat`), beside the commit floor's one-row commit
 * (bench/commit-floor.ts's table). Prints one JSON line. `node dist/bench/micro/wal-frames.bench.js`.
 */
import { readFileSync, statSync } from 'node:fs';
import { openDatabase } from '../../core/db/database.js';
import { utcDay } from '../../core/clock.js';
import { median } from '../stats.js';
import { SettleWriter } from '../../gateway/settle-writer.js';
import { fastId } from '../../gateway/fast-id.js';
import { microDb } from './micro-db.js';
import { paidCallRecord } from '../../test/helpers/db.js';

export interface WalFramesResult {
  /** Median frames per commit of the settle transaction, by calls per commit. */
  settle: { calls: number; frames: number; perCall: number }[];
  /** The b-trees one single-call settle commit wrote (a name per frame; repeats are pages of the same b-tree). */
  singleCallPages: string[];
  /** Frames of the commit floor's one-row commit. */
  commitFloorFrames: number;
  error?: string;
}

const WAL_HEADER = 32;
const FRAME_HEADER = 24;

/** Page numbers of the frames appended to the WAL since it was `before` bytes long. */
function _framesSince(walFile: string, before: number, pageSize: number): number[] {
  const buf = readFileSync(walFile);
  const pages: number[] = [];
  for (let off = Math.max(WAL_HEADER, before); off + FRAME_HEADER <= buf.length; off += FRAME_HEADER + pageSize)
    pages.push(buf.readUInt32BE(off));
  return pages;
}

async function _main(): Promise<void> {
  const m = await microDb(1_000_000_000);
  const h = openDatabase(m.file);
  const sq = h.sqlite;
  try {
    const now = Date.now();
    const day = utcDay(now);
    sq.prepare('INSERT INTO gateway_instances (id, pid, started_at, heartbeat_at) VALUES (?, ?, ?, ?)').run(
      'gwi_frames',
      process.pid,
      now,
      now,
    );
    sq.prepare(
      'INSERT INTO balance_leases (id, holder_id, org_id, key_id, day, amount_cents, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ).run('lease_frames', 'gwi_frames', m.consumer.orgId, m.consumer.keyId, day, 900_000_000, now, now + 3_600_000);
    sq.prepare('UPDATE balances SET reserved_cents = reserved_cents + ? WHERE org_id = ?').run(
      900_000_000,
      m.consumer.orgId,
    );
    // Checkpoints only where this bench says, so each commit's frames are the WAL's tail.
    sq.pragma('wal_autocheckpoint = 0');
    const pageSize = sq.pragma('page_size', { simple: true }) as number;
    const writer = new SettleWriter(sq, { holderId: 'gwi_frames', platformFeeBps: 2000 });
    const parties = {
      orgId: m.consumer.orgId,
      keyId: m.consumer.keyId,
      apiId: m.apiId,
      endpointId: m.endpointId,
      providerOrgId: m.providerOrgId,
    };
    const rec = () => {
      const t = Date.now();
      return paidCallRecord(parties, 'lease_frames', day, fastId('req', t), t);
    };
    const commit = async (calls: number) => Promise.all(Array.from({ length: calls }, () => writer.settle(rec())));
    for (let i = 0; i < 3000; i += 100) await commit(100);
    sq.pragma('wal_checkpoint(TRUNCATE)');
    const wal = `${m.file}-wal`;
    const names = new Map(
      (sq.prepare('SELECT pageno, name FROM dbstat').all() as { pageno: number; name: string }[]).map((r) => [
        r.pageno,
        r.name,
      ]),
    );
    const framesOf = async (write: () => Promise<unknown>) => {
      const before = statSync(wal).size;
      await write();
      return _framesSince(wal, before, pageSize);
    };
    const singleCallPages = (await framesOf(() => commit(1))).map((p) => names.get(p) ?? `new page ${p}`);
    const settle: WalFramesResult['settle'] = [];
    for (const calls of [1, 16, 128]) {
      const counts: number[] = [];
      for (let i = 0; i < 7; i++) counts.push((await framesOf(() => commit(calls))).length);
      const frames = median(counts) ?? NaN;
      settle.push({ calls, frames, perCall: Math.round((frames / calls) * 100) / 100 });
    }
    // The commit floor's table and statement (bench/commit-floor.ts), one row per commit.
    sq.exec(
      'CREATE TABLE floor_rows (id integer primary key, key_id integer not null, endpoint_id integer not null, charged_cents integer not null, status integer not null, at_ms integer not null)',
    );
    const insert = sq.prepare(
      'INSERT INTO floor_rows (key_id, endpoint_id, charged_cents, status, at_ms) VALUES (?, ?, ?, ?, ?)',
    );
    for (let i = 0; i < 3000; i++) insert.run(1, 1, 1, 200, Date.now());
    const floor: number[] = [];
    for (let i = 0; i < 7; i++) floor.push((await framesOf(async () => insert.run(1, 1, 1, 200, Date.now()))).length);
    const out: WalFramesResult = { settle, singleCallPages, commitFloorFrames: median(floor) ?? NaN };
    console.log(JSON.stringify(out));
  } catch (e) {
    console.log(JSON.stringify({ settle: [], singleCallPages: [], commitFloorFrames: NaN, error: String(e) }));
  } finally {
    h.close();
    m.cleanup();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) void _main();
