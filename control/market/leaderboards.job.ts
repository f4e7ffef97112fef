/** Background refresh of leaderboards and listing stats: once at start, then every SVC_LEADERBOARD_REFRESH_MS. */
import type { AppContext } from '../context.js';
import { refreshLeaderboards } from './leaderboards.service.js';
import { intervalJob } from '../lib/interval-job.js';

export function leaderboardJob(ctx: AppContext): () => void {
  return intervalJob(
    ctx.log,
    'leaderboard refresh',
    ctx.config.leaderboardRefreshMs,
    () => refreshLeaderboards(ctx.db, ctx.clock.now()),
    { firstAfterMs: 500 },
  );
}
