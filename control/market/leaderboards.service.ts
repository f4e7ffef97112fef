/**
 * Merit leaderboards, materialized into leaderboard_entries (and per-listing api_stats) off the hot path.
 * Formulas and the anti-gaming rationale are in docs/leaderboards.md: self-calls are dropped, each consumer org
 * counts through a square root, boards need several distinct orgs, and refunds and failed verifies discount.
 */
import { sql } from 'kysely';
import type { Db } from '../../core/db/database.js';
import { DAY_MS } from '../../core/clock.js';
import { BOARDS, type Board } from '../../core/enumerations.js';
import { pruneSearchChanges } from '../catalog/search-index.base.js';

export const BOARD_SIZE = 50;
/** Orgs needed for full credit: with fewer, every score is scaled by n / FULL_DIVERSITY_ORGS. */
export const FULL_DIVERSITY_ORGS = 5;
/** Per-org cap on calls counted toward reliability, so one org's volume cannot vouch for a listing. */
export const RELIABILITY_CALLS_CAP_PER_ORG = 50;

interface OrgUsage {
  api_id: string;
  org_id: string;
  calls: number;
  ok: number;
  gross: number;
  calls7: number;
  prev7: number;
}

/** @public Pure scoring arithmetic. */
export const diversity = (orgs: number): number => Math.min(1, orgs / FULL_DIVERSITY_ORGS);

/**
 * Wilson score lower bound (95%) of a success proportion: small samples cannot look perfectly reliable.
 * @public Pure scoring arithmetic.
 */
export function wilsonLower(successes: number, n: number): number {
  if (n <= 0) return 0;
  const z = 1.96;
  const p = successes / n;
  const denom = 1 + (z * z) / n;
  const centre = p + (z * z) / (2 * n);
  const margin = z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n));
  return Math.max(0, (centre - margin) / denom);
}

export interface ListingScoreInput {
  orgs: OrgUsage[];
  verifyOk: number | null;
  refundRate: number;
  publishedAt: number | null;
}

/**
 * Scores of one listing on every board (undefined = not eligible). Pure, so unit tests can table-drive it.
 * @public Pure scoring arithmetic.
 */
export function scoreListing(x: ListingScoreInput, now: number): Partial<Record<Board, number>> {
  const v = x.verifyOk === null ? 0.9 : x.verifyOk === 1 ? 1 : 0.5;
  const refund = 1 - Math.min(1, Math.max(0, x.refundRate));
  const active = x.orgs.filter((o) => o.calls > 0);
  const paying = x.orgs.filter((o) => o.gross > 0);
  const recent = x.orgs.filter((o) => o.calls7 > 0);
  const usage = active.reduce((s, o) => s + Math.sqrt(o.calls), 0);
  const totalCalls = active.reduce((s, o) => s + o.calls, 0);
  const capped = active.map((o) => ({ n: Math.min(o.calls, RELIABILITY_CALLS_CAP_PER_ORG), r: o.ok / o.calls }));
  const relN = capped.reduce((s, o) => s + o.n, 0);
  const lb = wilsonLower(
    capped.reduce((s, o) => s + o.n * o.r, 0),
    relN,
  );
  const gross = paying.reduce((s, o) => s + o.gross, 0);
  const out: Partial<Record<Board, number>> = {};
  if (paying.length >= 2)
    out.top_grossing = paying.reduce((s, o) => s + Math.sqrt(o.gross), 0) * diversity(paying.length) * refund * v;
  if (active.length >= 2) out.most_used = usage * diversity(active.length) * v;
  if (active.length >= 3 && totalCalls >= 20) out.most_reliable = lb * diversity(active.length) * v;
  if (active.length >= 3 && totalCalls >= 20) {
    const avgPrice = gross / totalCalls;
    out.best_value = (lb * Math.log2(1 + usage) * diversity(active.length) * v * refund) / (1 + avgPrice / 10);
  }
  if (recent.length >= 3) {
    const r = recent.reduce((s, o) => s + Math.sqrt(o.calls7), 0);
    const p = x.orgs.reduce((s, o) => s + Math.sqrt(o.prev7), 0);
    const t = ((r - p) / (p + 5)) * diversity(recent.length) * v;
    if (t > 0) out.trending = t;
  }
  if (x.publishedAt !== null && now - x.publishedAt <= 30 * DAY_MS && active.length >= 2) {
    out.new_rising =
      usage *
      diversity(active.length) *
      (totalCalls ? capped.reduce((s, o) => s + o.n * o.r, 0) / Math.max(1, relN) : 0) *
      v;
  }
  return out;
}

/** When this process last finished a refresh: an empty board still has a `computed_at` (no rows carry it then). */
let lastRefreshAt: number | null = null;
/** @internal Process state the market views read. */
export function lastLeaderboardRefresh(): number | null {
  return lastRefreshAt;
}
/**
 * Called once a refresh has committed; the job calls it on the control thread after a worker thread's refresh.
 * @internal Process state the refresh job writes.
 */
export function noteLeaderboardRefresh(at: number): void {
  lastRefreshAt = at;
}

/**
 * Long: the refresh is one transaction of SQL statements in order (one per board, then the listing stats); it is mostly
 * query text.
 * @internal The leaderboard refresh job (a worker thread).
 */
export async function refreshLeaderboards(db: Db, now: number): Promise<void> {
  const since = now - 30 * DAY_MS;
  const usage = (
    await sql<OrgUsage>`
    SELECT api_id, org_id, count(*) AS calls,
      sum(CASE WHEN status < 500 THEN 1 ELSE 0 END) AS ok,
      sum(charged_cents) AS gross,
      sum(CASE WHEN created_at >= ${now - 7 * DAY_MS} THEN 1 ELSE 0 END) AS calls7,
      sum(CASE WHEN created_at >= ${now - 14 * DAY_MS} AND created_at < ${now - 7 * DAY_MS} THEN 1 ELSE 0 END) AS prev7
    FROM usage_events
    WHERE created_at >= ${since} AND created_at <= ${now} AND org_id <> provider_org_id
    GROUP BY api_id, org_id`.execute(db)
  ).rows;
  // By cents, not rows: the gateway writes one earning row per API per commit, whatever the number of calls.
  const refunds = (
    await sql<{ api_id: string; earnings: number; reversals: number }>`
    SELECT api_id, sum(CASE WHEN kind = 'earning' THEN gross_cents ELSE 0 END) AS earnings, sum(CASE WHEN kind = 'reversal' THEN abs(gross_cents) ELSE 0 END) AS reversals
    FROM provider_earnings WHERE created_at >= ${since} AND api_id IS NOT NULL GROUP BY api_id`.execute(db)
  ).rows;
  const apis = await db
    .selectFrom('apis')
    .select(['id', 'category', 'published_at', 'last_verify_ok'])
    .where('status', '=', 'live')
    .where('suspended_at', 'is', null)
    .execute();

  const byApi = new Map<string, OrgUsage[]>();
  for (const u of usage) {
    const list = byApi.get(u.api_id) ?? [];
    list.push({
      ...u,
      calls: Number(u.calls),
      ok: Number(u.ok),
      gross: Number(u.gross),
      calls7: Number(u.calls7),
      prev7: Number(u.prev7),
    });
    byApi.set(u.api_id, list);
  }
  const refundBy = new Map(
    refunds.map((r) => [r.api_id, Number(r.earnings) ? Number(r.reversals) / Number(r.earnings) : 0]),
  );
  const scored = apis.map((a) => ({
    api: a,
    orgs: byApi.get(a.id) ?? [],
    scores: scoreListing(
      {
        orgs: byApi.get(a.id) ?? [],
        verifyOk: a.last_verify_ok,
        refundRate: refundBy.get(a.id) ?? 0,
        publishedAt: a.published_at,
      },
      now,
    ),
  }));
  const entries: {
    board: string;
    category: string;
    rank: number;
    api_id: string;
    score: number;
    computed_at: number;
  }[] = [];
  const categories = ['', ...new Set(apis.map((a) => a.category))];
  for (const board of BOARDS) {
    for (const category of categories) {
      const ranked = scored
        .filter((s) => s.scores[board] !== undefined && (category === '' || s.api.category === category))
        .sort((x, y) => y.scores[board]! - x.scores[board]! || (x.api.published_at ?? 0) - (y.api.published_at ?? 0))
        .slice(0, BOARD_SIZE);
      for (const [i, s] of ranked.entries())
        entries.push({
          board,
          category,
          rank: i + 1,
          api_id: s.api.id,
          score: Math.round(s.scores[board]! * 1e6) / 1e6,
          computed_at: now,
        });
    }
  }
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('leaderboard_entries').execute();
    for (let i = 0; i < entries.length; i += 200)
      await trx
        .insertInto('leaderboard_entries')
        .values(entries.slice(i, i + 200))
        .execute();
    // Only the rows whose numbers moved are written (computed_at = when they last changed): a refresh that rewrote
    // all 10,000 held the write lock for ~60 ms, and every other writer waits for it.
    const current = new Map(
      (
        await trx
          .selectFrom('api_stats')
          .select(['api_id', 'calls_30d', 'success_30d', 'orgs_30d', 'gross_30d_cents'])
          .execute()
      ).map((r) => [r.api_id, r]),
    );
    const stats = scored
      .map((s) => ({
        api_id: s.api.id,
        calls_30d: s.orgs.reduce((n, o) => n + o.calls, 0),
        success_30d: s.orgs.reduce((n, o) => n + o.ok, 0),
        orgs_30d: s.orgs.length,
        gross_30d_cents: s.orgs.reduce((n, o) => n + o.gross, 0),
        computed_at: now,
      }))
      .filter((s) => {
        const c = current.get(s.api_id);
        return (
          !c ||
          c.calls_30d !== s.calls_30d ||
          c.success_30d !== s.success_30d ||
          c.orgs_30d !== s.orgs_30d ||
          c.gross_30d_cents !== s.gross_30d_cents
        );
      });
    // Upsert (an unchanged row does not touch the search index, migration 0010), then drop the rows of APIs that
    // no longer exist. A listing that is merely not live keeps its row (every reader filters on live), so one
    // unpublished and published again shows its numbers at once instead of none until the next refresh.
    for (let i = 0; i < stats.length; i += 200)
      await trx
        .insertInto('api_stats')
        .values(stats.slice(i, i + 200))
        .onConflict((oc) =>
          oc.column('api_id').doUpdateSet((eb) => ({
            calls_30d: eb.ref('excluded.calls_30d'),
            success_30d: eb.ref('excluded.success_30d'),
            orgs_30d: eb.ref('excluded.orgs_30d'),
            gross_30d_cents: eb.ref('excluded.gross_30d_cents'),
            computed_at: eb.ref('excluded.computed_at'),
          })),
        )
        .execute();
    await trx
      .deleteFrom('api_stats')
      .where('api_id', 'not in', (eb) => eb.selectFrom('apis').select('id'))
      .execute();
    await pruneSearchChanges(trx);
  });
  noteLeaderboardRefresh(now);
}
