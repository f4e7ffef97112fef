/** Public provider directory and profiles, and the catalog request form. */
import { CatalogRequestInputSchema } from '../../../core/schemas/catalog.schemas.js';
import { recordCatalogRequest } from '../../catalog/catalog-requests.service.js';
import { listProviders, providerPage } from '../../providers/profile.service.js';
import { clientIp } from '../../lib/client-ip.js';
import { csrfField } from '../csrf.js';
import { formString } from '../form.js';
import { renderPage } from '../layout.js';
import { renderMarkdown } from '../markdown.js';
import { newWebRouter } from '../web-env.js';

export const providersPages = newWebRouter();

providersPages.get('/providers', async (c) => {
  const query = (c.req.query('q') ?? '').slice(0, 100);
  const page = Math.max(1, Math.min(1000, Number(c.req.query('page')) || 1));
  const dir = await listProviders(c.get('ctx').db, c.get('webSession')?.principal, {
    query: query || undefined,
    limit: 30,
    offset: (page - 1) * 30,
  });
  return renderPage(
    c,
    { title: 'Providers' },
    <>
      <form class="filters" method="get" role="search">
        <label>
          Find a provider
          <input type="search" name="q" value={query} />
        </label>
        <div>
          <button type="submit">Search</button>
        </div>
      </form>
      <ul class="cards">
        {dir.data.map((p) => (
          <li class="card">
            <h2>
              <a href={`/providers/${p.slug}`}>{p.display_name}</a>
            </h2>
            <p class="meta">{p.live_listings} live listings</p>
          </li>
        ))}
      </ul>
      <nav class="pager" aria-label="Pages">
        {page > 1 ? <a href={`/providers?q=${encodeURIComponent(query)}&page=${page - 1}`}>← Previous</a> : null}
        {dir.has_more ? <a href={`/providers?q=${encodeURIComponent(query)}&page=${page + 1}`}>Next →</a> : null}
      </nav>
    </>,
  );
});

providersPages.get('/providers/:slug', async (c) => {
  const { db } = c.get('ctx');
  const p = await providerPage(db, c.get('webSession')?.principal, c.req.param('slug'));
  const listings = p.listings;
  const website = p.website && /^https?:\/\//i.test(p.website) ? p.website : null;
  return renderPage(
    c,
    { title: p.display_name },
    <>
      {p.bio ? renderMarkdown(p.bio) : null}
      {website ? (
        <p>
          <a href={website} rel="nofollow noopener ugc">
            {website}
          </a>
        </p>
      ) : null}
      <h2>Live listings</h2>
      <ul>
        {listings.map((l) => (
          <li>
            <a href={`/apis/${l.slug}`}>{l.name}</a> <span class="meta">{l.summary}</span>
          </li>
        ))}
      </ul>
    </>,
  );
});

function requestPage(c: Parameters<typeof csrfField>[0], error?: string, done?: boolean) {
  return renderPage(
    c,
    { title: 'Request an API', status: error ? 400 : 200 },
    <>
      {done ? (
        <p class="notice ok" role="status">
          Thanks: your request is recorded.
        </p>
      ) : null}
      {error ? (
        <p class="notice error" role="alert">
          {error}
        </p>
      ) : null}
      <p>Tell us which API is missing from the catalog.</p>
      <form class="stack" method="post" action="/catalog/request">
        {csrfField(c)}
        <label>
          What should it do?
          <input name="query" required minlength={2} maxlength={500} />
        </label>
        <label>
          Email for a reply <span class="hint">optional</span>
          <input type="email" name="email" autocomplete="email" />
        </label>
        <label>
          Notes <span class="hint">optional</span>
          <textarea name="notes" rows={4} maxlength={2000}></textarea>
        </label>
        <div>
          <button type="submit">Send request</button>
        </div>
      </form>
    </>,
  );
}

providersPages.get('/catalog/request', (c) => requestPage(c));

providersPages.post('/catalog/request', async (c) => {
  // An empty optional field is absent; the operation's own schema (core/schemas) judges the rest.
  const f = CatalogRequestInputSchema.safeParse({
    query: (await formString(c, 'query')) ?? '',
    email: (await formString(c, 'email'))?.trim() || undefined,
    notes: (await formString(c, 'notes')) || undefined,
  });
  if (!f.success) return requestPage(c, 'Describe the API in 2 to 500 characters; the email must be valid.');
  await recordCatalogRequest(c.get('ctx'), c.get('webSession')?.principal, clientIp(c), f.data);
  return requestPage(c, undefined, true);
});
