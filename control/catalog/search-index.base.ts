/**
 * What the in-memory search index (search-index.ts) is built from, read straight from SQLite: every FTS5 token
 * instance of `apis_fts` (through `fts5vocab`), each row's token count (FTS5's own docsize records), and the
 * `listing_search` rows, all in one read transaction together with the change log's position. Plain arrays and
 * typed arrays only, so a worker thread can build it and post it (search-index.worker.ts).
 */
import Sqlite from '../../core/db/sqlite-driver.js';
import { sql } from 'kysely';
import type { Db } from '../../core/db/database.js';

/** bm25 column weights, in apis_fts column order (name, summary, description, tags, paths); the SQL uses them too. */
export const COLUMN_WEIGHTS = [10.0, 5.0, 1.0, 4.0, 2.0] as const;
const COLUMNS = ['name', 'summary', 'description', 'tags', 'paths'] as const;
const WEIGHT_OF = new Map<string, number>(COLUMNS.map((c, i) => [c, COLUMN_WEIGHTS[i]!]));

/** A searchable listing's filter and sort columns (`listing_search`). */
export interface ListingRow {
  rowid: number;
  apiId: string;
  category: string;
  publishedAt: number;
  minPrice: number;
  orgs: number;
  calls: number;
  reliability: number;
}

export interface IndexBase {
  /** The change log's last seq this base includes. */
  seq: number;
  /** Every distinct token, sorted by JS string order. */
  terms: string[];
  /** Postings of terms[i] are positions termStart[i] .. termStart[i + 1] - 1. */
  termStart: Int32Array<ArrayBuffer>;
  /** Dense doc index of each posting. */
  postDoc: Int32Array<ArrayBuffer>;
  /** The term's hits in that doc, each weighted by its column's bm25 weight (an integer-valued double). */
  postFreq: Float64Array<ArrayBuffer>;
  /** Dense doc index → apis_fts rowid. */
  docRowid: Float64Array<ArrayBuffer>;
  /** Dense doc index → tokens in the row, all columns (what FTS5's xColumnSize(-1) returns). */
  docLen: Int32Array<ArrayBuffer>;
  rows: ListingRow[];
}

const LISTING_COLUMNS =
  'rowid, api_id, category, published_at, min_price_cents, orgs_30d, calls_30d, reliability FROM listing_search';

function toListingRow(r: unknown[]): ListingRow {
  return {
    rowid: Number(r[0]),
    apiId: String(r[1]),
    category: String(r[2]),
    publishedAt: Number(r[3]),
    minPrice: Number(r[4]),
    orgs: Number(r[5]),
    calls: Number(r[6]),
    reliability: Number(r[7]),
  };
}

/** Reads a listing's search row by rowid (undefined when it is not searchable). */
export function listingRowReader(sqlite: Sqlite.Database): (rowid: number) => ListingRow | undefined {
  const stmt = sqlite.prepare(`SELECT ${LISTING_COLUMNS} WHERE rowid = ?`).raw();
  return (rowid) => {
    const r = stmt.get(rowid) as unknown[] | undefined;
    return r ? toListingRow(r) : undefined;
  };
}

/** `apis_fts`'s CREATE statement: the scratch tokenizer copies it, so tokens are made exactly as the index makes them. */
export function ftsDefinition(sqlite: Sqlite.Database): string {
  const sql = sqlite.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'apis_fts'").pluck().get();
  if (typeof sql !== 'string') throw new Error('apis_fts is missing');
  return sql;
}

/** Sum of an FTS5 docsize record: one varint per column. */
function docsizeTotal(blob: Buffer): number {
  let total = 0;
  let i = 0;
  while (i < blob.length) {
    let v = 0;
    for (let n = 0; n < 9; n++) {
      const byte = blob[i++]!;
      if (n === 8) {
        v = v * 256 + byte;
        break;
      }
      v = v * 128 + (byte & 0x7f);
      if (!(byte & 0x80)) break;
    }
    total += v;
  }
  return total;
}

/** Reads the whole base in one read transaction. Seconds of work at 100,000 listings: run it off the request thread. */
export function readIndexBase(sqlite: Sqlite.Database): IndexBase {
  sqlite.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.apis_fts_instances USING fts5vocab(main, apis_fts, 'instance')`);
  return sqlite.transaction((): IndexBase => {
    const seq = Number(
      sqlite.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'search_changes'").pluck().get() ?? 0,
    );
    const sizes = sqlite.prepare('SELECT id, sz FROM apis_fts_docsize ORDER BY id').raw().all() as [number, Buffer][];
    const docRowid = new Float64Array(sizes.length);
    const docLen = new Int32Array(sizes.length);
    const docOf = new Map<number, number>();
    sizes.forEach(([id, sz], i) => {
      docRowid[i] = id;
      docLen[i] = docsizeTotal(sz);
      docOf.set(id, i);
    });
    // term → [doc, weighted hits, doc, weighted hits, ...]
    const postings = new Map<string, number[]>();
    const instances = sqlite.prepare('SELECT term, doc, col FROM temp.apis_fts_instances').raw();
    let term = '';
    let list: number[] = [];
    for (const [t, rowid, col] of instances.iterate() as IterableIterator<[string, number, string]>) {
      if (t !== term) {
        term = t;
        list = postings.get(t) ?? [];
        postings.set(t, list);
      }
      const doc = docOf.get(rowid);
      if (doc === undefined) continue;
      const w = WEIGHT_OF.get(col) ?? 1.0;
      if (list.length > 0 && list[list.length - 2] === doc) list[list.length - 1]! += w;
      else list.push(doc, w);
    }
    const terms = [...postings.keys()].sort();
    const termStart = new Int32Array(terms.length + 1);
    let total = 0;
    for (let i = 0; i < terms.length; i++) {
      termStart[i] = total;
      total += postings.get(terms[i]!)!.length / 2;
    }
    termStart[terms.length] = total;
    const postDoc = new Int32Array(total);
    const postFreq = new Float64Array(total);
    let p = 0;
    for (const t of terms) {
      const l = postings.get(t)!;
      for (let i = 0; i < l.length; i += 2, p++) {
        postDoc[p] = l[i]!;
        postFreq[p] = l[i + 1]!;
      }
    }
    const rows = (sqlite.prepare(`SELECT ${LISTING_COLUMNS}`).raw().all() as unknown[][]).map(toListingRow);
    return { seq, terms, termStart, postDoc, postFreq, docRowid, docLen, rows };
  })();
}

/** One row's tokens: term → hits weighted by column, and the row's token count. */
export interface DocTokens {
  terms: Map<string, number>;
  length: number;
}

/**
 * A tokenizer that is FTS5's own: a scratch in-memory table made with `definition` (apis_fts's CREATE statement).
 * Returns null for text it cannot read back.
 */
export function tokenizerOf(definition: string): (cols: string[]) => DocTokens | null {
  const scratch = new Sqlite(':memory:');
  scratch.exec(definition.replace(/\bapis_fts\b/, 'scratch'));
  scratch.exec(`CREATE VIRTUAL TABLE scratch_instances USING fts5vocab(scratch, 'instance')`);
  const insert = scratch.prepare(
    'INSERT INTO scratch (rowid, name, summary, description, tags, paths) VALUES (1, ?, ?, ?, ?, ?)',
  );
  const instances = scratch.prepare('SELECT term, col FROM scratch_instances').raw();
  const size = scratch.prepare('SELECT sz FROM scratch_docsize WHERE id = 1').pluck();
  const clear = scratch.prepare('DELETE FROM scratch');
  return (cols) => {
    insert.run(...COLUMNS.map((_, i) => cols[i] ?? ''));
    try {
      const terms = new Map<string, number>();
      for (const [term, col] of instances.all() as [string, string][])
        terms.set(term, (terms.get(term) ?? 0) + (WEIGHT_OF.get(col) ?? 1.0));
      const sz = size.get();
      return sz instanceof Buffer ? { terms, length: docsizeTotal(sz) } : null;
    } finally {
      clear.run();
    }
  };
}

/** Change-log entries kept; an index further behind than this rebuilds its base. */
export const SEARCH_CHANGES_KEPT = 100_000;

/** Drops all but the newest `keep` change-log entries (the leaderboard refresh calls it once a minute). */
export async function pruneSearchChanges(db: Db, keep = SEARCH_CHANGES_KEPT): Promise<void> {
  await db
    .deleteFrom('search_changes')
    .where('seq', '<=', sql<number>`(SELECT max(seq) FROM search_changes) - ${keep}`)
    .execute();
}
