/** A background timer that never overlaps itself: a slow run makes later ticks skip, not stack. Returns a stopper. */
import type { Logger } from '../../core/log.js';

export function intervalJob(
  log: Logger,
  name: string,
  everyMs: number,
  run: () => Promise<unknown>,
  opts: { firstAfterMs?: number } = {},
): () => void {
  let running = false;
  const tick = (): void => {
    if (running) return;
    running = true;
    run()
      .catch((e: unknown) => log.error(`${name} failed`, { err: e instanceof Error ? e : String(e) }))
      .finally(() => {
        running = false;
      });
  };
  const first = opts.firstAfterMs === undefined ? undefined : setTimeout(tick, opts.firstAfterMs);
  const timer = setInterval(tick, everyMs);
  first?.unref();
  timer.unref();
  return () => {
    if (first) clearTimeout(first);
    clearInterval(timer);
  };
}
