/** The public catalog: search with filters (query, category, sort, max price, free only) and paging. */
import { z } from 'zod';
import { categoriesWithCounts, searchCatalog } from '../../catalog/search.service.js';
import { SORTS } from '../../../core/enumerations.js';
import { ListingCard } from '../listing-card.js';
import { dollarsToCents } from '../form.js';
import { renderPage } from '../layout.js';
import { newWebRouter } from '../web-env.js';

export const catalogPages = newWebRouter();

export const CATALOG_PAGE_SIZE = 20;

const Filters = z.object({
  q: z.string().trim().max(200).optional().catch(undefined),
  category: z.string().trim().max(40).optional().catch(undefined),
  sort: z.enum(SORTS).optional().catch(undefined),
  max_price: z.string().trim().max(12).optional().catch(undefined),
  free: z.literal('1').optional().catch(undefined),
  page: z.coerce.number().int().min(1).max(10_000).optional().catch(undefined),
});

// Long: a page: the filters and the search call at the top, the rest is the markup of one view (filter form, results,
// paging).
catalogPages.get('/catalog', async (c) => {
  const { db } = c.get('ctx');
  const f = Filters.parse(c.req.query());
  let maxPrice: number | undefined;
  try {
    maxPrice = f.free ? 0 : (dollarsToCents('max_price', f.max_price) ?? undefined);
  } catch {
    maxPrice = undefined;
  }
  const page = f.page ?? 1;
  const [found, categories] = await Promise.all([
    searchCatalog(db, c.get('webSession')?.principal, {
      query: f.q || undefined,
      category: f.category || undefined,
      sort: f.sort,
      max_price_cents: maxPrice,
      limit: CATALOG_PAGE_SIZE,
      offset: (page - 1) * CATALOG_PAGE_SIZE,
    }),
    categoriesWithCounts(db, c.get('webSession')?.principal),
  ]);
  const { data: listings, total } = found;
  const link = (p: number) => {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries({ ...f, page: String(p) })) if (v) qs.set(k, String(v));
    return `/catalog?${qs}`;
  };
  return renderPage(
    c,
    { title: 'API catalog', description: 'Search the APIs listed on svc.' },
    <>
      <form class="filters" method="get" action="/catalog" role="search">
        <label>
          Search
          <input type="search" name="q" value={f.q ?? ''} placeholder="weather, translate…" />
        </label>
        <label>
          Category
          <select name="category">
            <option value="">All</option>
            {categories.map((cat) => (
              <option value={cat.category} selected={cat.category === f.category}>
                {cat.category} ({cat.count})
              </option>
            ))}
          </select>
        </label>
        <label>
          Sort
          <select name="sort">
            {SORTS.map((s) => (
              <option value={s} selected={s === (f.sort ?? 'relevance')}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Max price ($)
          <input name="max_price" inputmode="decimal" value={f.max_price ?? ''} />
        </label>
        <label class="check">
          <input type="checkbox" name="free" value="1" checked={f.free === '1'} /> Free endpoints only
        </label>
        <div>
          <button type="submit">Search</button>
        </div>
      </form>
      <p role="status">
        {total} {total === 1 ? 'API' : 'APIs'} found
      </p>
      <ul class="cards">
        {listings.map((l) => (
          <ListingCard l={l} />
        ))}
      </ul>
      <nav class="pager" aria-label="Pages">
        {page > 1 ? <a href={link(page - 1)}>← Previous</a> : null}
        {found.has_more ? <a href={link(page + 1)}>Next →</a> : null}
      </nav>
      <p>
        Missing an API? <a href="/catalog/request">Request it</a>.
      </p>
    </>,
  );
});
