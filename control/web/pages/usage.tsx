/**
 * Dashboard usage: charts per UTC day and per API over the last N days, a table per API, the newest calls, and
 * a CSV export of the calls (cells that a spreadsheet would run as a formula are quoted as text).
 */
import { usageSummary } from '../../usage/usage.service.js';
import { formatCents } from '../../../core/money.js';
import { renderChart } from '../chart.js';
import { renderPage } from '../layout.js';
import { newWebRouter } from '../web-env.js';
import { requireWebSession } from '../web-session.js';
import { DashNav } from './dashboard-nav.js';

export const usagePages = newWebRouter();

const DAY_MS = 86_400_000;
const RANGES = [7, 30, 90] as const;
const CSV_MAX_ROWS = 10_000;

function rangeOf(q: string | undefined): number {
  const n = Number(q);
  return (RANGES as readonly number[]).includes(n) ? n : 30;
}

/** Every UTC day of the window, so days without calls show as zero rather than vanishing from the chart. */
function daysOf(from: number, to: number): string[] {
  const out: string[] = [];
  for (let t = from; t < to; t += DAY_MS) out.push(new Date(t).toISOString().slice(0, 10));
  return out;
}

// Long: a page: the usage read at the top, the rest is the markup of one view (chart, per-API and per-key tables).
usagePages.get('/dashboard/usage', async (c) => {
  const p = requireWebSession(c);
  const { db, clock } = c.get('ctx');
  const days = rangeOf(c.req.query('days'));
  const to = Math.floor(clock.now() / DAY_MS) * DAY_MS + DAY_MS;
  const from = to - days * DAY_MS;
  const u = await usageSummary(db, p, { from, to, limit: 20, offset: 0 });
  const dayKeys = daysOf(from, to);
  const byDay = new Map(u.by_day.map((d) => [d.day, d]));
  return renderPage(
    c,
    { title: 'Usage' },
    <>
      <DashNav current="/dashboard/usage" />
      <p>
        Last {days} days:{' '}
        {RANGES.map((r) => (
          <>
            <a href={`/dashboard/usage?days=${r}`} aria-current={r === days ? 'page' : undefined}>
              {r} days
            </a>{' '}
          </>
        ))}
        · <a href={`/dashboard/usage.csv?days=${days}`}>Download CSV</a>
      </p>
      <dl class="facts">
        <dt>Calls</dt>
        <dd data-testid="total-calls">{u.totals.calls}</dd>
        <dt>Charged</dt>
        <dd data-testid="total-charged">{formatCents(u.totals.charged_cents)}</dd>
        <dt>Failed calls</dt>
        <dd>{u.totals.failed_calls}</dd>
      </dl>
      <h2>Per day</h2>
      {renderChart({
        title: `Calls per UTC day, last ${days} days`,
        categories: dayKeys.map((d) => d.slice(5)),
        series: [{ name: 'calls', data: dayKeys.map((d) => byDay.get(d)?.calls ?? 0) }],
        unit: 'count',
      })}
      {renderChart({
        title: `Charged per UTC day, last ${days} days`,
        categories: dayKeys.map((d) => d.slice(5)),
        series: [{ name: 'charged', data: dayKeys.map((d) => byDay.get(d)?.charged_cents ?? 0) }],
        unit: 'cents',
      })}
      <h2>Per API</h2>
      {u.by_api.length ? (
        <>
          {renderChart({
            title: 'Charged per API',
            categories: u.by_api.map((a) => a.slug),
            series: [{ name: 'charged', data: u.by_api.map((a) => a.charged_cents) }],
            unit: 'cents',
          })}
          <div class="table-wrap" tabindex={0} role="region" aria-label="Table (scrolls sideways on narrow screens)">
            <table>
              <thead>
                <tr>
                  <th scope="col">API</th>
                  <th scope="col" class="num">
                    Calls
                  </th>
                  <th scope="col" class="num">
                    Charged
                  </th>
                </tr>
              </thead>
              <tbody>
                {u.by_api.map((a) => (
                  <tr>
                    <td>
                      <a href={`/apis/${a.slug}`}>{a.slug}</a>
                    </td>
                    <td class="num">{a.calls}</td>
                    <td class="num">{formatCents(a.charged_cents)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      ) : (
        <p>No calls in this period.</p>
      )}
      <h2>Newest calls</h2>
      <div class="table-wrap" tabindex={0} role="region" aria-label="Table (scrolls sideways on narrow screens)">
        <table>
          <thead>
            <tr>
              <th scope="col">When (UTC)</th>
              <th scope="col">API</th>
              <th scope="col">Call</th>
              <th scope="col" class="num">
                Status
              </th>
              <th scope="col" class="num">
                Charged
              </th>
            </tr>
          </thead>
          <tbody>
            {u.events.data.map((e) => (
              <tr>
                <td>{e.created_at.slice(0, 19).replace('T', ' ')}</td>
                <td>{e.slug ?? '—'}</td>
                <td>
                  <code>
                    {e.method} {e.path ?? ''}
                  </code>
                </td>
                <td class="num">{e.status}</td>
                <td class="num">{formatCents(e.charged_cents)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>,
  );
});

const CSV_COLUMNS = [
  'created_at',
  'request_id',
  'api',
  'method',
  'path',
  'status',
  'latency_ms',
  'price_cents',
  'charged_cents',
  'error_code',
  'key_id',
] as const;

/** RFC 4180 quoting, and a leading ' on cells a spreadsheet would treat as a formula. */
export function csvCell(v: string | number | null | undefined): string {
  let s = v === null || v === undefined ? '' : String(v);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n']/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

usagePages.get('/dashboard/usage.csv', async (c) => {
  const p = requireWebSession(c);
  const { db, clock } = c.get('ctx');
  const days = rangeOf(c.req.query('days'));
  const to = Math.floor(clock.now() / DAY_MS) * DAY_MS + DAY_MS;
  const u = await usageSummary(db, p, { from: to - days * DAY_MS, to, limit: CSV_MAX_ROWS, offset: 0 });
  const lines = [CSV_COLUMNS.join(',')];
  for (const e of u.events.data)
    lines.push(
      [
        e.created_at,
        e.request_id,
        e.slug,
        e.method,
        e.path,
        e.status,
        e.latency_ms,
        e.price_cents,
        e.charged_cents,
        e.error_code,
        e.key_id,
      ]
        .map(csvCell)
        .join(','),
    );
  c.header('content-type', 'text/csv; charset=utf-8');
  c.header('content-disposition', `attachment; filename="svc-usage-last-${days}-days.csv"`);
  return c.body(`${lines.join('\r\n')}\r\n`);
});
