/** Background timers of the control process (price schedules, auto-reload, leaderboards...). Each returns a stopper. */
import type { AppContext } from './context.js';
import { autoReloadJob, payoutsJob } from './billing/billing.jobs.js';
import { priceScheduleJob } from './pricing/pricing.service.js';
import { leaderboardJob } from './market/leaderboards.job.js';
import { oauthSweepJob } from './oauth/oauth.jobs.js';
import { signInSweepJob } from './sessions/sessions.jobs.js';
import { searchIndexWarmUp } from './catalog/search-index.owner.js';
import { backupJob } from './backup/backup.jobs.js';
import { alertsJob, webhookDeliveryJob } from './webhooks/webhooks.jobs.js';

export type Job = (ctx: AppContext) => () => void;

const JOBS: Job[] = [
  autoReloadJob,
  payoutsJob,
  priceScheduleJob,
  leaderboardJob,
  oauthSweepJob,
  signInSweepJob,
  searchIndexWarmUp,
  backupJob,
  webhookDeliveryJob,
  alertsJob,
];

export function startBackgroundJobs(ctx: AppContext): () => void {
  const stops = JOBS.map((job) => job(ctx));
  return () => {
    for (const stop of stops) stop();
  };
}
