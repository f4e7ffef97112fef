/**
 * The catalog's in-memory search index: the same matches, bm25 scores and order as the FTS5 query in
 * search.service.ts, computed from postings held in memory. FTS5 ranks by calling bm25() on every match before it
 * knows the first 20 (3-8 ms for 2,000-4,000 matches at 10,000 listings on this VM, more on a page cache another
 * process's write has just emptied); here a search no cache has seen costs a fraction of a millisecond.
 *
 * Exact by construction: tokens come from SQLite's own FTS5 tokenizer (the index's `fts5vocab` instances at build;
 * a scratch in-memory FTS5 table with apis_fts's own definition for changed listings and query words), and scores are
 * fts5_aux.c's bm25 evaluated in the same order, so they are the same doubles. Tests compare every answer with FTS5.
 *
 * Fresh by construction: the base is read in one read transaction (search-index.base.ts; a worker thread builds it
 * for large catalogs), and migration 0013's change log names each listing whose text or search row changed after
 * that; the index re-reads just those before it answers. It answers nothing (the caller falls back to FTS5) until the
 * base exists, while a rebuild is due, inside another request's open transaction on the shared connection (it would
 * see uncommitted rows), or for a query word that is not exactly one token.
 */
import Sqlite from 'better-sqlite3';
import type { Sort } from '../../core/enumerations.js';
import { type IndexBase, type ListingRow, listingRowReader, tokenizerOf, type DocTokens } from './search-index.base.js';

/**
 * Changed listings applied in place (text tokenized again; search rows read again); more at once rebuild the base
 * in a worker instead of stopping the request thread (a text change costs ~100 µs, a row ~5 µs).
 */
const MAX_TEXT_CHANGES = 256;
const MAX_ROW_CHANGES = 5_000;
/** Listings re-tokenized since the base past which a fresh base is built in the background (each query scans them). */
const COMPACT_AFTER = 128;
const K1 = 1.2;
const B = 0.75;

export interface IndexQuery {
  /** Query words as ftsQuery takes them (each one becomes a `"word"*` prefix phrase). */
  words: string[] | null;
  category?: string | undefined;
  max_price_cents?: number | undefined;
  sort: Sort;
  limit: number;
  offset: number;
}

export class SearchIndex {
  readonly #sqlite: Sqlite.Database;
  readonly #tokenize: (cols: string[]) => DocTokens | null;
  readonly #readRow: (rowid: number) => ListingRow | undefined;
  readonly #changesAfter: Sqlite.Statement;
  readonly #lastSeq: Sqlite.Statement;
  readonly #ftsText: Sqlite.Statement;
  /** Applies the change log in one read transaction; false when a rebuild is due. */
  readonly #applyChanges: () => boolean;
  readonly #queryTerms = new Map<string, string | null>();
  readonly #base: IndexBase;
  #seq: number;
  /** rowid → dense doc index (base docs first, then docs added since). */
  readonly #docOf = new Map<number, number>();
  readonly #docLen: number[] = [];
  /** Base postings no longer valid for the doc: its text changed (see #overlay) or it is gone. */
  readonly #baseDead: Uint8Array;
  /** Docs whose text changed since the base: their own term → weighted hits. */
  readonly #overlay = new Map<number, Map<string, number>>();
  /** Searchable docs' rows (live, unsuspended, with an endpoint), by dense doc index. */
  readonly #rows: (ListingRow | undefined)[] = [];
  #docCount = 0;
  #tokenTotal = 0;
  #stale = false;
  // Scratch space reused across queries: per-phrase weighted hits by doc, and which docs were touched.
  #freq: Float64Array[] = [];
  /** bm25() as FTS5 returns it (negative; lower ranks first), by doc, for the query being answered. */
  #rank = new Float64Array(0);
  /** Each candidate's first sort column, ascending (negated for a descending column). */
  #key = new Float64Array(0);
  #mark = new Uint32Array(0);
  #epoch = 0;

  constructor(sqlite: Sqlite.Database, base: IndexBase, ftsDefinition: string) {
    this.#sqlite = sqlite;
    this.#tokenize = tokenizerOf(ftsDefinition);
    this.#readRow = listingRowReader(sqlite);
    this.#changesAfter = sqlite.prepare('SELECT seq, doc, text FROM search_changes WHERE seq > ? ORDER BY seq').raw();
    this.#lastSeq = sqlite.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'search_changes'").pluck();
    this.#ftsText = sqlite
      .prepare('SELECT name, summary, description, tags, paths FROM apis_fts WHERE rowid = ?')
      .raw();
    this.#applyChanges = sqlite.transaction(() => this.#apply());
    this.#base = base;
    this.#seq = base.seq;
    this.#baseDead = new Uint8Array(base.docRowid.length);
    for (let i = 0; i < base.docRowid.length; i++) {
      this.#docOf.set(base.docRowid[i]!, i);
      this.#docLen.push(base.docLen[i]!);
      this.#tokenTotal += base.docLen[i]!;
    }
    this.#docCount = base.docRowid.length;
    for (const row of base.rows) {
      const doc = this.#docOf.get(row.rowid);
      if (doc !== undefined) this.#rows[doc] = row;
    }
  }

  /** True once the change log has moved past what in-place updates cover: the owner builds a new base. */
  get stale(): boolean {
    return this.#stale;
  }

  /** True when enough listings changed since the base that a fresh one would answer faster (this one still answers). */
  get wantsCompaction(): boolean {
    return this.#overlay.size > COMPACT_AFTER;
  }

  /**
   * Ordered api ids (limit + 1, for has_more) and the total, or undefined when the index cannot answer exactly
   * (the caller asks FTS5).
   */
  search(q: IndexQuery): { ids: string[]; total: number } | undefined {
    if (this.#stale || this.#sqlite.inTransaction || !this.#catchUp()) return undefined;
    const n = this.#docLen.length;
    if (this.#mark.length < n) {
      const size = Math.max(n, this.#mark.length * 2);
      this.#mark = new Uint32Array(size);
      this.#rank = new Float64Array(size);
      this.#key = new Float64Array(size);
    }
    let stems: string[] | null = null;
    if (q.words) {
      stems = [];
      for (const w of q.words) {
        const stem = this.#queryTerm(w);
        if (stem === null) return undefined;
        stems.push(stem);
      }
    }
    const candidates = stems ? this.#ranked(stems, q) : this.#all(q);
    const rows = this.#rows as ListingRow[];
    const order = comparator(q.sort, stems !== null, rows, this.#rank);
    // Most comparisons end at the first sort column: read it once per candidate, into a flat array.
    const key = this.#key;
    for (const doc of candidates) key[doc] = order.first(doc);
    const compare: Compare = (a, b) => (key[a]! < key[b]! ? -1 : key[a]! > key[b]! ? 1 : order.rest(a, b));
    const top = smallest(candidates, q.offset + q.limit + 1, key, compare);
    return { ids: top.slice(q.offset).map((doc) => rows[doc]!.apiId), total: candidates.length };
  }

  /** bm25() of every searchable match of `words` by api id, as FTS5 returns it (diagnostics; tests compare the doubles). */
  scores(words: string[]): Map<string, number> | undefined {
    const found = this.search({ words, sort: 'relevance', limit: 0, offset: 0 });
    if (!found) return undefined;
    const rows = this.#rows as ListingRow[];
    const stems = words.map((w) => this.#queryTerm(w)!);
    return new Map(
      this.#ranked(stems, { words, sort: 'relevance', limit: 0, offset: 0 }).map((d) => [
        rows[d]!.apiId,
        this.#rank[d]!,
      ]),
    );
  }

  /** Applies the change log past #seq; false when it has a gap or too much text changed (a rebuild is due). */
  #catchUp(): boolean {
    if (!this.#applyChanges()) this.#stale = true;
    return !this.#stale;
  }

  #apply(): boolean {
    const rows = this.#changesAfter.all(this.#seq) as [number, number, number][];
    if (rows.length === 0) return Number(this.#lastSeq.get() ?? 0) <= this.#seq;
    // Committed seqs are consecutive (AUTOINCREMENT rolls back with its transaction): a missing one was pruned.
    if (rows[0]![0] !== this.#seq + 1) return false;
    const docs = new Map<number, boolean>();
    for (const [, doc, text] of rows) docs.set(doc, docs.get(doc) === true || text === 1 || !this.#docOf.has(doc));
    let texts = 0;
    for (const t of docs.values()) if (t) texts++;
    if (texts > MAX_TEXT_CHANGES || docs.size > MAX_ROW_CHANGES) return false;
    for (const [doc, text] of docs) {
      if (text) this.#retokenize(doc);
      const idx = this.#docOf.get(doc);
      if (idx !== undefined) this.#rows[idx] = this.#readRow(doc);
    }
    this.#seq = rows[rows.length - 1]![0];
    return !this.#stale;
  }

  /** Replaces doc `rowid`'s postings with its current FTS text (or drops it). */
  #retokenize(rowid: number): void {
    const cols = this.#ftsText.get(rowid) as (string | null)[] | undefined;
    let idx = this.#docOf.get(rowid);
    if (idx !== undefined) {
      this.#tokenTotal -= this.#docLen[idx]!;
      if (idx < this.#baseDead.length) this.#baseDead[idx] = 1;
      this.#overlay.delete(idx);
      if (!cols) {
        this.#docOf.delete(rowid);
        this.#docLen[idx] = 0;
        this.#rows[idx] = undefined;
        this.#docCount--;
        return;
      }
    }
    if (!cols) return;
    const tokens = this.#tokenize(cols.map((c) => c ?? ''));
    if (!tokens) {
      this.#stale = true;
      return;
    }
    if (idx === undefined) {
      idx = this.#docLen.length;
      this.#docOf.set(rowid, idx);
      this.#docLen.push(0);
      this.#docCount++;
    }
    this.#docLen[idx] = tokens.length;
    this.#tokenTotal += tokens.length;
    this.#overlay.set(idx, tokens.terms);
  }

  /** The single token FTS5 makes of a query word, null when it makes none or several. */
  #queryTerm(word: string): string | null {
    let term = this.#queryTerms.get(word);
    if (term === undefined) {
      const tokens = this.#tokenize([word, '', '', '', '']);
      term = tokens && tokens.terms.size === 1 && tokens.length === 1 ? tokens.terms.keys().next().value! : null;
      if (this.#queryTerms.size >= 10_000) this.#queryTerms.clear();
      this.#queryTerms.set(word, term);
    }
    return term;
  }

  /** Searchable matches of the prefix phrases `stems` that pass the filters, with FTS5's bm25 rank. */
  #ranked(stems: string[], q: IndexQuery): number[] {
    const n = this.#docLen.length;
    const epoch = this.#nextEpoch();
    const touched: number[] = [];
    const idf: number[] = [];
    const freqs: Float64Array[] = [];
    for (let i = 0; i < stems.length; i++) {
      const freq = this.#phraseScratch(i, n);
      freqs.push(freq);
      const hits = this.#accumulate(stems[i]!, freq, (doc) => {
        if (this.#mark[doc] !== epoch) {
          this.#mark[doc] = epoch;
          touched.push(doc);
        }
      });
      const v = Math.log((this.#docCount - hits + 0.5) / (hits + 0.5));
      idf.push(v <= 0 ? 1e-6 : v);
    }
    const avgdl = this.#tokenTotal / this.#docCount;
    const out: number[] = [];
    for (const doc of touched) {
      const row = this.#rows[doc];
      if (row && passes(row, q)) {
        // fts5_aux.c's fts5Bm25Function, operation for operation.
        const d = this.#docLen[doc]!;
        let score = 0.0;
        for (let i = 0; i < freqs.length; i++) {
          const f = freqs[i]![doc]!;
          score += idf[i]! * ((f * (K1 + 1.0)) / (f + K1 * (1 - B + (B * d) / avgdl)));
        }
        this.#rank[doc] = -1.0 * score;
        out.push(doc);
      }
    }
    for (const freq of freqs) for (const doc of touched) freq[doc] = 0;
    return out;
  }

  /** Adds each doc's weighted hits of terms starting with `stem` into `freq`; returns how many docs have any. */
  #accumulate(stem: string, freq: Float64Array, touch: (doc: number) => void): number {
    const { terms, termStart, postDoc, postFreq } = this.#base;
    let hits = 0;
    for (let t = lowerBound(terms, stem); t < terms.length && terms[t]!.startsWith(stem); t++) {
      for (let p = termStart[t]!; p < termStart[t + 1]!; p++) {
        const doc = postDoc[p]!;
        if (this.#baseDead[doc]) continue;
        if (freq[doc] === 0) {
          hits++;
          touch(doc);
        }
        freq[doc] = freq[doc]! + postFreq[p]!;
      }
    }
    for (const [doc, docTerms] of this.#overlay) {
      let f = 0;
      for (const [term, w] of docTerms) if (term.startsWith(stem)) f += w;
      if (f > 0) {
        hits++;
        touch(doc);
        freq[doc] = f;
      }
    }
    return hits;
  }

  /** Every searchable listing that passes the filters (a search without words). */
  #all(q: IndexQuery): number[] {
    const out: number[] = [];
    const rows = this.#rows;
    for (let doc = 0; doc < rows.length; doc++) {
      const row = rows[doc];
      if (row && passes(row, q)) out.push(doc);
    }
    return out;
  }

  #phraseScratch(i: number, n: number): Float64Array {
    let f = this.#freq[i];
    if (!f || f.length < n) this.#freq[i] = f = new Float64Array(Math.max(n, (f?.length ?? 0) * 2));
    return f;
  }

  #nextEpoch(): number {
    if (++this.#epoch === 0xffffffff) {
      this.#mark.fill(0);
      this.#epoch = 1;
    }
    return this.#epoch;
  }
}

function passes(row: ListingRow, q: IndexQuery): boolean {
  return (
    (q.category === undefined || row.category === q.category) &&
    (q.max_price_cents === undefined || row.minPrice <= q.max_price_cents)
  );
}

/** First index whose term is >= `key` (terms sorted by JS string order, where a prefix's terms are contiguous). */
function lowerBound(terms: string[], key: string): number {
  let lo = 0;
  let hi = terms.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (terms[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Orders doc indices. */
type Compare = (a: number, b: number) => number;

const desc = (a: number, b: number) => (a === b ? 0 : a > b ? -1 : 1);
const asc = (a: number, b: number) => (a === b ? 0 : a < b ? -1 : 1);

/** A sort order of doc indices: the first column as a number that sorts ascending, then the rest on a tie. */
interface Order {
  first: (doc: number) => number;
  rest: Compare;
}

/**
 * search.service.ts's ORDER BY for `sort` over doc indices (the FTS5 SQL is the reference; tests hold them equal).
 * `rank` holds each candidate's bm25 when the query has words.
 */
function comparator(sort: Sort, matched: boolean, rows: ListingRow[], rank: Float64Array): Order {
  const newest: Compare = (a, b) => desc(rows[a]!.publishedAt, rows[b]!.publishedAt);
  // Without words, what would be relevance ties break newest first.
  const relevance: Compare = matched ? (a, b) => asc(rank[a]!, rank[b]!) : newest;
  const byId: Compare = (a, b) => {
    const x = rows[a]!.apiId;
    const y = rows[b]!.apiId;
    return x < y ? -1 : x > y ? 1 : 0;
  };
  const chain =
    (...cs: Compare[]): Compare =>
    (a, b) => {
      for (const c of cs) {
        const r = c(a, b);
        if (r !== 0) return r;
      }
      return 0;
    };
  const calls: Compare = (a, b) => desc(rows[a]!.calls, rows[b]!.calls);
  switch (sort) {
    case 'price':
      return {
        first: (d) => rows[d]!.minPrice,
        rest: matched ? chain(relevance, newest, byId) : chain(relevance, byId),
      };
    case 'popularity':
      return { first: (d) => -rows[d]!.orgs, rest: chain(calls, relevance, byId) };
    case 'reliability':
      return { first: (d) => -rows[d]!.reliability, rest: chain(calls, relevance, byId) };
    case 'newest':
      return { first: (d) => -rows[d]!.publishedAt, rest: byId };
    case 'relevance':
      return matched
        ? { first: (d) => rank[d]!, rest: chain((a, b) => desc(rows[a]!.orgs, rows[b]!.orgs), newest, byId) }
        : comparator('popularity', false, rows, rank);
  }
}

/**
 * The `k` smallest of `items` under `compare`, in order. `key[item]` is compare's first column: the k-th smallest
 * key is found in linear time, and only the items up to it (ties included) are sorted; a bounded heap takes over
 * when ties make that set large.
 */
function smallest(items: number[], k: number, key: Float64Array, compare: Compare): number[] {
  if (items.length <= k) return items.sort(compare);
  const keys = new Float64Array(items.length);
  for (let i = 0; i < items.length; i++) keys[i] = key[items[i]!]!;
  const limit = kth(keys, k - 1);
  const chosen = items.filter((d) => key[d]! <= limit);
  return chosen.length <= 4 * k ? chosen.sort(compare).slice(0, k) : heapSmallest(chosen, k, compare);
}

/** The value of rank `n` (0-based) in `a` (reordered in place): Hoare's selection. */
function kth(a: Float64Array, n: number): number {
  let lo = 0;
  let hi = a.length - 1;
  while (lo < hi) {
    const pivot = a[(lo + hi) >>> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i]! < pivot) i++;
      while (a[j]! > pivot) j--;
      if (i <= j) {
        const t = a[i]!;
        a[i] = a[j]!;
        a[j] = t;
        i++;
        j--;
      }
    }
    if (n <= j) hi = j;
    else if (n >= i) lo = i;
    else return a[n]!;
  }
  return a[n]!;
}

/** The `k` smallest of `items` under `compare`, in order: a bounded max-heap, one comparison for most items. */
function heapSmallest(items: number[], k: number, compare: Compare): number[] {
  const heap: number[] = [];
  const worse = (i: number, j: number) => compare(heap[i]!, heap[j]!) > 0;
  const swap = (i: number, j: number) => {
    const t = heap[i]!;
    heap[i] = heap[j]!;
    heap[j] = t;
  };
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && worse(l, m)) m = l;
      if (r < heap.length && worse(r, m)) m = r;
      if (m === i) return;
      swap(i, m);
      i = m;
    }
  };
  for (const item of items) {
    if (heap.length < k) {
      heap.push(item);
      for (let i = heap.length - 1; i > 0; ) {
        const p = (i - 1) >> 1;
        if (!worse(i, p)) break;
        swap(i, p);
        i = p;
      }
    } else if (k > 0 && compare(item, heap[0]!) < 0) {
      heap[0] = item;
      down(0);
    }
  }
  return heap.sort(compare);
}
