/**
 * The front page, built to answer in five seconds what svc is and what to do: a search box, live market numbers,
 * popular and new listings, categories with counts, and the three ways in (a person, an agent, a provider).
 * Reads only the in-memory catalog index and the cached market overview, so it stays as fast as the catalog.
 */
import { categoriesWithCounts, searchCatalog } from '../../catalog/search.service.js';
import { marketOverview } from '../../market/market.service.js';
import { formatCents } from '../../../core/money.js';
import { ListingCard, hueClass } from '../listing-card.js';
import { renderPage } from '../layout.js';
import { newWebRouter } from '../web-env.js';

export const homeRoutes = newWebRouter();

const n = (v: number) => v.toLocaleString('en-US');

// Long: a page: the catalog reads at the top, the rest is the markup of the home page's sections.
homeRoutes.get('/', async (c) => {
  const ctx = c.get('ctx');
  const session = c.get('webSession');
  const reader = session?.principal;
  const [popular, fresh, categories, market] = await Promise.all([
    searchCatalog(ctx.db, reader, { sort: 'popularity', limit: 6, offset: 0 }),
    searchCatalog(ctx.db, reader, { sort: 'newest', limit: 3, offset: 0 }),
    categoriesWithCounts(ctx.db, reader),
    marketOverview(ctx.db, reader, ctx.clock.now()),
  ]);
  const mcpConfig = JSON.stringify({ mcpServers: { svc: { url: ctx.config.urls.mcp } } }, null, 2);
  const day = market.windows['24h'];
  return renderPage(
    c,
    {
      title: 'One key for every API your agents call',
      description: 'A marketplace of HTTP APIs: search, try, and call them through one gateway, paying per call.',
    },
    <>
      <p class="lead">
        Find an API, see its price per call, and call it through one gateway with one key. Pay per call from prepaid
        credits; caps on every key keep an agent within budget.
      </p>
      <form class="hero-search" method="get" action="/catalog" role="search">
        <label class="visually-hidden" for="home-q">
          Search APIs
        </label>
        <input id="home-q" type="search" name="q" placeholder="Search APIs: weather, translate, geocode…" />
        <button type="submit">Search</button>
      </form>
      <ul class="stats" aria-label="The market right now">
        <li>
          <strong>{n(market.live_listings)}</strong> live APIs
        </li>
        <li>
          <strong>{n(market.endpoints)}</strong> endpoints
        </li>
        <li>
          <strong>{n(market.providers)}</strong> providers
        </li>
        <li>
          <strong>{n(day.calls)}</strong> calls in 24 h
          {day.volume_cents > 0 ? ` · ${formatCents(day.volume_cents)}` : ''}
        </li>
      </ul>
      <h2>Popular this month</h2>
      {popular.data.length === 0 ? (
        <p>No live APIs yet. Providers list theirs from the provider area.</p>
      ) : (
        <ul class="cards">
          {popular.data.map((l) => (
            <ListingCard l={l} />
          ))}
        </ul>
      )}
      {fresh.data.length > 0 ? (
        <>
          <h2>New on svc</h2>
          <ul class="cards">
            {fresh.data.map((l) => (
              <ListingCard l={l} />
            ))}
          </ul>
        </>
      ) : null}
      {categories.length > 0 ? (
        <>
          <h2>Categories</h2>
          <ul class="chips">
            {categories.map((cat) => (
              <li>
                <a
                  class={`cat ${hueClass(cat.category)}`}
                  href={`/catalog?category=${encodeURIComponent(cat.category)}`}
                >
                  {cat.category} <span class="count">{cat.count}</span>
                </a>
              </li>
            ))}
          </ul>
        </>
      ) : null}
      <h2 id="connect">Three ways in</h2>
      <ul class="ways">
        <li class="card">
          <h3>Use an API yourself</h3>
          <p>Sign in with your email, get starter credits, create a key with a daily cap, and call.</p>
          <a class="button" href={session ? '/dashboard' : '/login'}>
            {session ? 'Your dashboard' : 'Sign in or create an account'}
          </a>
        </li>
        <li class="card">
          <h3>Connect an agent</h3>
          <p>
            Run <code>svc connect</code> to set up Claude, Cursor and other MCP clients, or add the MCP server yourself:
          </p>
          <pre tabindex={0} role="region" aria-label="MCP client configuration">
            <code>{mcpConfig}</code>
          </pre>
        </li>
        <li class="card">
          <h3>List your API</h3>
          <p>Import an OpenAPI document, set a price per call, publish, and get paid out.</p>
          <a class="button secondary" href={session ? '/provider' : '/login?next=%2Fprovider'}>
            Open the provider area
          </a>
        </li>
      </ul>
      <p>
        <a href="/catalog">Browse the whole catalog</a> · <a href="/leaderboards">Leaderboards</a> ·{' '}
        <a href="/market">Market numbers</a>
      </p>
    </>,
  );
});
