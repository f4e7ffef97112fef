/**
 * The in-memory search index's filter and sort columns (search-index.ts): each searchable listing's
 * `listing_search` row by dense doc index, one typed array per column. A query reads a column for thousands of
 * matches; from typed arrays those reads are sequential and unboxed (from row objects they were most of a search).
 */
import type { ListingRow } from './search-index.base.js';

/** A sort column as an ascending number: `rank` is bm25; a descending column is stored negated. */
export type Column = 'rank' | 'minPrice' | '-orgs' | '-calls' | '-reliability' | '-publishedAt';

export class ListingColumns {
  /** Api id of each searchable doc; undefined for a doc that is not searchable. */
  readonly apiId: (string | undefined)[] = [];
  category = new Int32Array(0);
  minPrice = new Float64Array(0);
  #sorted: Record<Exclude<Column, 'rank'>, Float64Array> = {
    minPrice: this.minPrice,
    '-orgs': new Float64Array(0),
    '-calls': new Float64Array(0),
    '-reliability': new Float64Array(0),
    '-publishedAt': new Float64Array(0),
  };
  readonly #categories = new Map<string, number>();
  /** Category id → name. */
  readonly categoryNames: string[] = [];

  /** Sets (or, with undefined, clears) doc `doc`'s row. */
  set(doc: number, row: ListingRow | undefined): void {
    if (doc >= this.category.length) this.#grow(doc + 1);
    if (!row) {
      this.apiId[doc] = undefined;
      return;
    }
    let category = this.#categories.get(row.category);
    if (category === undefined) {
      category = this.#categories.size;
      this.#categories.set(row.category, category);
      this.categoryNames.push(row.category);
    }
    this.apiId[doc] = row.apiId;
    this.category[doc] = category;
    this.minPrice[doc] = row.minPrice;
    this.#sorted['-orgs'][doc] = -row.orgs;
    this.#sorted['-calls'][doc] = -row.calls;
    this.#sorted['-reliability'][doc] = -row.reliability;
    this.#sorted['-publishedAt'][doc] = -row.publishedAt;
  }

  /** The id `category` has in `this.category`, or -1 when no listing has it. */
  categoryId(category: string): number {
    return this.#categories.get(category) ?? -1;
  }

  /** A column's values by doc (`rank` is not stored here). */
  column(c: Exclude<Column, 'rank'>): Float64Array {
    return this.#sorted[c];
  }

  #grow(min: number): void {
    const size = Math.max(min, this.category.length * 2, 64);
    const grown = (a: Float64Array) => {
      const b = new Float64Array(size);
      b.set(a);
      return b;
    };
    const category = new Int32Array(size);
    category.set(this.category);
    this.category = category;
    this.minPrice = grown(this.minPrice);
    this.#sorted = {
      minPrice: this.minPrice,
      '-orgs': grown(this.#sorted['-orgs']),
      '-calls': grown(this.#sorted['-calls']),
      '-reliability': grown(this.#sorted['-reliability']),
      '-publishedAt': grown(this.#sorted['-publishedAt']),
    };
  }
}
