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
import Sqlite from '../../core/db/sqlite-driver.js';
import type { Sort } from '../../core/enumerations.js';
import { type IndexBase, type ListingRow, listingRowReader, tokenizerOf, type DocTokens } from './search-index.base.js';
import { type Column, ListingColumns } from './search-index.columns.js';
import type { ListingSummary } from '../../core/schemas/catalog.schemas.js';

/**
 * Changed listings applied in place (text tokenized again; search rows read again); more at once rebuild the base
 * in a worker instead of stopping the request thread (a text change costs ~100 µs, a row ~5 µs).
 */
const MAX_TEXT_CHANGES = 256;
const MAX_ROW_CHANGES = 5_000;
/**
 * Listings re-tokenized or dropped since the base past which a fresh base is built in the background (each query
 * scans the first and passes over the second).
 */
const COMPACT_AFTER = 128;
/**
 * Past this many the index stops answering (FTS5 does) until a fresh base replaces it: when that build keeps failing,
 * every query would otherwise scan an ever larger set of re-tokenized listings.
 */
const MAX_CHANGED = 4 * COMPACT_AFTER;
/** Cached listing summaries kept (about 600 bytes each); past this the cache starts again. */
const MAX_SUMMARIES = 20_000;
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
  /** Docs dropped since the base: their slots (and base postings) stay until a fresh base, and queries pass them. */
  #dropped = 0;
  /** Searchable docs' rows (live, unsuspended, with an endpoint), by dense doc index. */
  readonly #rows = new ListingColumns();
  /** Listing summaries by api id, each dropped when the change log names its listing (search.service.ts fills it). */
  readonly #summaries = new Map<string, ListingSummary>();
  #docCount = 0;
  #tokenTotal = 0;
  #stale = false;
  // Scratch space reused across queries: per-phrase weighted hits by doc, and which docs were touched.
  #freq: Float64Array[] = [];
  /** bm25() as FTS5 returns it (negative; lower ranks first), by doc, for the query being answered. */
  #rank = new Float64Array(0);
  /** The candidates' first sort column, for the selection (search-index.ts's smallest). */
  #values = new Float64Array(0);
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
      if (doc !== undefined) this.#rows.set(doc, row);
    }
  }

  /** True once the change log has moved past what in-place updates cover: the owner builds a new base. */
  get stale(): boolean {
    return this.#stale;
  }

  /** True when enough listings changed since the base that a fresh one would answer faster (this one still answers). */
  get wantsCompaction(): boolean {
    return this.#changedSinceBase() > COMPACT_AFTER;
  }

  /** Listings re-tokenized or dropped since the base. */
  #changedSinceBase(): number {
    return this.#overlay.size + this.#dropped;
  }

  /**
   * Ordered api ids (limit + 1, for has_more) and the total, or undefined when the index cannot answer exactly
   * (the caller asks FTS5).
   */
  search(q: IndexQuery): { ids: string[]; total: number } | undefined {
    if (!this.#ready()) return undefined;
    this.#growScratch();
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
    const rows = this.#rows;
    const keys = sortColumns(q.sort, stems !== null).map((c) => (c === 'rank' ? this.#rank : rows.column(c)));
    const top = smallest(candidates, q.offset + q.limit + 1, keys, rows.apiId as string[], this.#values);
    return { ids: top.slice(q.offset).map((doc) => rows.apiId[doc]!), total: candidates.length };
  }

  /** bm25() of every searchable match of `words` by api id, as FTS5 returns it (diagnostics; tests compare the doubles). */
  scores(words: string[]): Map<string, number> | undefined {
    const stems = words.map((w) => this.#queryTerm(w));
    if (!this.#ready() || !stems.every((s): s is string => s !== null)) return undefined;
    this.#growScratch();
    const matches = this.#ranked(stems, { words, sort: 'relevance', limit: 0, offset: 0 });
    return new Map(matches.map((d) => [this.#rows.apiId[d]!, this.#rank[d]!]));
  }

  /** Searchable listings per category (most first, then by name), or undefined when the index cannot answer now. */
  categoryCounts(): { category: string; count: number }[] | undefined {
    if (!this.#ready()) return undefined;
    const { apiId, category, categoryNames } = this.#rows;
    const counts = new Array<number>(categoryNames.length).fill(0);
    for (let doc = 0; doc < this.#docLen.length; doc++) if (apiId[doc] !== undefined) counts[category[doc]!]!++;
    return categoryNames
      .map((name, i) => ({ category: name, count: counts[i]! }))
      .filter((c) => c.count > 0)
      .sort((a, b) => b.count - a.count || (a.category < b.category ? -1 : a.category > b.category ? 1 : 0));
  }

  /**
   * The cached summaries of `apiIds` (undefined where none is cached), with the change-log position they are good
   * for; undefined when the index cannot vouch for them now.
   */
  cachedSummaries(apiIds: string[]): { stamp: number; summaries: (ListingSummary | undefined)[] } | undefined {
    if (!this.#ready()) return undefined;
    return { stamp: this.#seq, summaries: apiIds.map((id) => this.#summaries.get(id)) };
  }

  /**
   * Keeps summaries read after cachedSummaries returned `stamp`. If any change was applied since, they are not kept:
   * one of them might predate it.
   */
  rememberSummaries(stamp: number, summaries: Map<string, ListingSummary>): void {
    if (stamp !== this.#seq || this.#stale) return;
    if (this.#summaries.size + summaries.size > MAX_SUMMARIES) this.#summaries.clear();
    for (const [id, summary] of summaries) this.#summaries.set(id, summary);
  }

  /**
   * Whether the index can answer now: not stale, not inside another request's open transaction on the shared
   * connection (it would read uncommitted rows), and caught up with the change log.
   */
  #ready(): boolean {
    return !this.#stale && !this.#sqlite.inTransaction && this.#catchUp();
  }

  /**
   * Applies the change log past #seq; false when it has a gap, too much text changed at once or since the base (a
   * rebuild is due).
   */
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
      const before = this.#docOf.get(doc);
      if (before !== undefined) this.#forgetSummary(before);
      if (text) this.#retokenize(doc);
      const idx = this.#docOf.get(doc);
      if (idx !== undefined) {
        this.#rows.set(idx, this.#readRow(doc));
        this.#forgetSummary(idx);
      }
    }
    this.#seq = rows[rows.length - 1]![0];
    return !this.#stale && this.#changedSinceBase() <= MAX_CHANGED;
  }

  #forgetSummary(doc: number): void {
    const id = this.#rows.apiId[doc];
    if (id !== undefined) this.#summaries.delete(id);
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
        this.#rows.set(idx, undefined);
        this.#docCount--;
        this.#dropped++;
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
    const filter = this.#filter(q);
    const out: number[] = [];
    for (const doc of touched) {
      if (filter(doc)) {
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
    const filter = this.#filter(q);
    for (let doc = 0; doc < this.#docLen.length; doc++) if (filter(doc)) out.push(doc);
    return out;
  }

  /** Whether a doc is searchable and passes the query's category and price filters. */
  #filter(q: IndexQuery): (doc: number) => boolean {
    const { apiId, category, minPrice } = this.#rows;
    const cat = q.category === undefined ? undefined : this.#rows.categoryId(q.category);
    const max = q.max_price_cents;
    return (doc) =>
      apiId[doc] !== undefined &&
      (cat === undefined || category[doc] === cat) &&
      (max === undefined || minPrice[doc]! <= max);
  }

  /** Sizes the per-doc scratch arrays for every doc the index has. */
  #growScratch(): void {
    const n = this.#docLen.length;
    if (this.#mark.length >= n) return;
    const size = Math.max(n, this.#mark.length * 2);
    this.#mark = new Uint32Array(size);
    this.#rank = new Float64Array(size);
    this.#values = new Float64Array(size);
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

/**
 * search.service.ts's ORDER BY for `sort`, before the final api id, as ascending numeric columns (the FTS5 SQL is the
 * reference; tests hold them equal). Without words, what would be relevance ties break newest first.
 */
function sortColumns(sort: Sort, matched: boolean): Column[] {
  const relevance: Column = matched ? 'rank' : '-publishedAt';
  switch (sort) {
    case 'price':
      return matched ? ['minPrice', 'rank', '-publishedAt'] : ['minPrice', '-publishedAt'];
    case 'popularity':
      return ['-orgs', '-calls', relevance];
    case 'reliability':
      return ['-reliability', '-calls', relevance];
    case 'newest':
      return ['-publishedAt'];
    case 'relevance':
      return matched ? ['rank', '-orgs', '-publishedAt'] : sortColumns('popularity', false);
  }
}

/** Orders doc indices by the key columns in turn, then api id. */
function compareBy(keys: Float64Array[], apiId: string[]): (a: number, b: number) => number {
  return (a, b) => {
    for (const key of keys) {
      const x = key[a]!;
      const y = key[b]!;
      if (x !== y) return x < y ? -1 : 1;
    }
    const p = apiId[a]!;
    const q = apiId[b]!;
    return p < q ? -1 : p > q ? 1 : 0;
  };
}

/**
 * The `k` smallest of `items` in sort order. The k-th smallest first column is found in linear time, and only the
 * items up to it (ties included) are ordered; a bounded heap takes over when ties make that set large.
 */
function smallest(items: number[], k: number, keys: Float64Array[], apiId: string[], scratch: Float64Array): number[] {
  const compare = compareBy(keys, apiId);
  if (items.length <= k) return items.sort(compare);
  const first = keys[0]!;
  // A view on reused memory: a fresh Float64Array per search cost more than the selection itself.
  const values = scratch.subarray(0, items.length);
  for (let i = 0; i < items.length; i++) values[i] = first[items[i]!]!;
  const limit = kth(values, k - 1);
  const chosen = items.filter((d) => first[d]! <= limit);
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
function heapSmallest(items: number[], k: number, compare: (a: number, b: number) => number): number[] {
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
