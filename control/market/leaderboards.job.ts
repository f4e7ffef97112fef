/** Background refresh of leaderboards and listing stats: once at start, then every SVC_LEADERBOARD_REFRESH_MS. */
import type { AppContext } from '../context.js';
import { refreshLeaderboards } from './leaderboards.service.js';

export function leaderboardJob(ctx: AppContext): () => void {
  let running = false;
  const tick = (): void => {
    if (running) return;
    running = true;
    refreshLeaderboards(ctx.db, ctx.clock.now())
      .catch((e: unknown) => ctx.log.error('leaderboard refresh failed', { err: e instanceof Error ? e : String(e) }))
      .finally(() => {
        running = false;
      });
  };
  const first = setTimeout(tick, 500);
  const timer = setInterval(tick, ctx.config.leaderboardRefreshMs);
  first.unref();
  timer.unref();
  return () => {
    clearTimeout(first);
    clearInterval(timer);
  };
}
