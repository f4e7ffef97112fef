/** Public market pages: the six leaderboards, the market overview with charts, and the activity feed. */
import { BOARDS, type Board } from '../../../core/enumerations.js';
import { activityFeed, leaderboard, marketOverview } from '../../market/market.service.js';
import { categoriesWithCounts } from '../../catalog/search.service.js';
import { SvcError } from '../../../core/errors.js';
import { formatCents } from '../../../core/money.js';
import { renderChart } from '../chart.js';
import { renderPage } from '../layout.js';
import { newWebRouter } from '../web-env.js';

export const marketPages = newWebRouter();

const BOARD_TEXT: Record<Board, string> = {
  top_grossing: 'Most spent on in the last 30 days',
  most_used: 'Most calls from the most distinct consumers',
  most_reliable: 'Highest success rate with enough traffic',
  best_value: 'Reliable and cheap',
  trending: 'Growing fastest this week',
  new_rising: 'Newly published and already used',
};
/** Who qualifies for each board, from scoreListing (control/market/leaderboards.service.ts): the data it needs. */
const BOARD_RULE: Record<Board, string> = {
  top_grossing: 'Qualifies: paid calls from at least 2 organizations in the last 30 days.',
  most_used: 'Qualifies: calls from at least 2 organizations in the last 30 days.',
  most_reliable: 'Qualifies: at least 20 calls from at least 3 organizations in the last 30 days.',
  best_value: 'Qualifies: at least 20 calls from at least 3 organizations in the last 30 days.',
  trending: 'Qualifies: calls from at least 3 organizations this week, more than the week before.',
  new_rising: 'Qualifies: published in the last 30 days, with calls from at least 2 organizations.',
};
const title = (b: string) => b.replace(/_/g, ' ').replace(/^./, (ch) => ch.toUpperCase());

/** What marketOverview computes (its cache types it loosely). */
interface Overview {
  computed_at: string;
  live_listings: number;
  providers: number;
  endpoints: number;
  windows: Record<string, { calls: number; volume_cents: number; active_consumers: number }>;
  top_categories: { category: string; listings: number; calls_30d: number }[];
}

marketPages.get('/leaderboards', (c) =>
  renderPage(
    c,
    { title: 'Leaderboards' },
    <ul class="cards">
      {BOARDS.map((b) => (
        <li class="card">
          <h2>
            <a href={`/leaderboards/${b}`}>{title(b)}</a>
          </h2>
          <p>{BOARD_TEXT[b]}.</p>
          <p class="meta">{BOARD_RULE[b]}</p>
        </li>
      ))}
    </ul>,
  ),
);

marketPages.get('/leaderboards/:board', async (c) => {
  const board = c.req.param('board') as Board;
  if (!BOARDS.includes(board)) throw new SvcError('not_found', `No leaderboard ${board}`);
  const { db } = c.get('ctx');
  const category = (c.req.query('category') ?? '').slice(0, 40);
  const [lb, categories] = await Promise.all([
    leaderboard(db, c.get('webSession')?.principal, board, category, 50),
    categoriesWithCounts(db, c.get('webSession')?.principal),
  ]);
  return renderPage(
    c,
    { title: title(board) },
    <>
      <p>{BOARD_TEXT[board]}.</p>
      <p class="meta">{BOARD_RULE[board]} Boards are recomputed every few minutes.</p>
      <form class="filters" method="get">
        <label>
          Category
          <select name="category">
            <option value="">All</option>
            {categories.map((cat) => (
              <option value={cat.category} selected={cat.category === category}>
                {cat.category}
              </option>
            ))}
          </select>
        </label>
        <div>
          <button type="submit">Show</button>
        </div>
      </form>
      {lb.entries.length === 0 ? (
        <p class="empty">
          No listing qualifies yet{category ? ` in ${category}` : ''}. {BOARD_RULE[board]}
        </p>
      ) : null}
      <ol>
        {lb.entries.map((e) => (
          <li>
            <a href={`/apis/${e.listing.slug}`}>{e.listing.name}</a>{' '}
            <span class="meta">
              {e.listing.category} · {e.listing.calls_30d} calls (30 d)
            </span>
          </li>
        ))}
      </ol>
      <p class="hint">{lb.computed_at ? `Computed ${lb.computed_at.slice(0, 16).replace('T', ' ')} UTC.` : ''}</p>
    </>,
  );
});

marketPages.get('/market', async (c) => {
  const { db, clock } = c.get('ctx');
  const o = (await marketOverview(db, c.get('webSession')?.principal, clock.now())) as Overview;
  const windows = Object.entries(o.windows);
  return renderPage(
    c,
    { title: 'Market overview' },
    <>
      <dl class="facts">
        <dt>Live listings</dt>
        <dd>{o.live_listings}</dd>
        <dt>Providers</dt>
        <dd>{o.providers}</dd>
        <dt>Endpoints</dt>
        <dd>{o.endpoints}</dd>
      </dl>
      <div class="table-wrap" tabindex={0} role="region" aria-label="Table (scrolls sideways on narrow screens)">
        <table>
          <thead>
            <tr>
              <th scope="col">Window</th>
              <th scope="col" class="num">
                Calls
              </th>
              <th scope="col" class="num">
                Volume
              </th>
              <th scope="col" class="num">
                Active consumers
              </th>
            </tr>
          </thead>
          <tbody>
            {windows.map(([name, w]) => (
              <tr>
                <td>{name}</td>
                <td class="num">{w.calls}</td>
                <td class="num">{formatCents(w.volume_cents)}</td>
                <td class="num">{w.active_consumers}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {renderChart({
        title: 'Calls in the last 24 hours, 7 days and 30 days',
        categories: windows.map(([n]) => n),
        series: [{ name: 'calls', data: windows.map(([, w]) => w.calls) }],
        unit: 'count',
        height: 200,
      })}
      {o.top_categories.length
        ? renderChart({
            title: 'Top categories by calls in the last 30 days',
            categories: o.top_categories.map((t) => t.category),
            series: [{ name: 'calls (30 d)', data: o.top_categories.map((t) => t.calls_30d) }],
            unit: 'count',
          })
        : null}
      <p>
        See also the <a href="/activity">activity feed</a> and the <a href="/leaderboards">leaderboards</a>.
      </p>
    </>,
  );
});

marketPages.get('/activity', async (c) => {
  const page = Math.max(1, Math.min(1000, Number(c.req.query('page')) || 1));
  const feed = await activityFeed(c.get('ctx').db, c.get('webSession')?.principal, 50, (page - 1) * 50);
  return renderPage(
    c,
    { title: 'Activity' },
    <>
      <ul>
        {feed.data.map((a) => (
          <li>
            <time datetime={a.created_at}>{a.created_at.slice(0, 16).replace('T', ' ')}</time>{' '}
            {a.kind.replace(/_/g, ' ')}
            {a.slug ? (
              <>
                {': '}
                <a href={`/apis/${a.slug}`}>{a.slug}</a>
              </>
            ) : typeof a.data.name === 'string' ? (
              `: ${a.data.name}`
            ) : null}
          </li>
        ))}
      </ul>
      <nav class="pager" aria-label="Pages">
        {page > 1 ? <a href={`/activity?page=${page - 1}`}>← Newer</a> : null}
        {feed.has_more ? <a href={`/activity?page=${page + 1}`}>Older →</a> : null}
      </nav>
    </>,
  );
});
