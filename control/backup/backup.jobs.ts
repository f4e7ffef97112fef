/** Scheduled backups (SVC_BACKUP_DIR / SVC_BACKUP_EVERY / SVC_BACKUP_KEEP): off unless a directory is set. */
import type { AppContext } from '../context.js';
import { intervalJob } from '../lib/interval-job.js';
import { gauge } from '../../core/metrics.js';
import { backupStatus, scheduledBackup } from './backup.service.js';

export function backupJob(ctx: AppContext): () => void {
  const { dir, everyMs, keep } = ctx.config.backup;
  // SQLite file backups only: on PostgreSQL, backups are pg_basebackup + WAL archiving (docs/scale-out.md).
  const sqlite = ctx.sqlite;
  if (!dir || !sqlite) return () => {};
  gauge('svc_backup_last_success_timestamp_seconds', 'When the last scheduled backup was written', [], function () {
    this.set(backupStatus.lastSuccessAt / 1000);
  });
  gauge('svc_backup_last_bytes', 'Size of the last scheduled backup', [], function () {
    this.set(backupStatus.lastBytes);
  });
  gauge('svc_backup_last_duration_seconds', 'How long the last scheduled backup took', [], function () {
    this.set(backupStatus.lastMs / 1000);
  });
  return intervalJob(ctx.log, 'backup', everyMs, async () => {
    try {
      const r = await scheduledBackup(sqlite, dir, keep, ctx.clock.now());
      Object.assign(backupStatus, { lastSuccessAt: ctx.clock.now(), lastBytes: r.bytes, lastMs: r.ms });
      ctx.log.info('backup written', { file: r.file, bytes: r.bytes, ms: r.ms, removed: r.removed.length });
    } catch (e) {
      backupStatus.lastFailureAt = ctx.clock.now();
      throw e;
    }
  });
}
