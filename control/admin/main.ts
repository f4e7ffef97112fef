/**
 * Operator tool (`npm run admin -- <command>`): runs on the marketplace's own machine against the same SQLite
 * file as the processes (SVC_DATA_DIR / SVC_DB_FILE), through the same domain services, so every change is
 * ledgered and reaches running gateways through the change feed. See docs/admin.md.
 */
import { defineCommand, runMain } from 'citty';

const main = defineCommand({
  meta: {
    name: 'svc-admin',
    description: 'Operate an svc marketplace: orgs, credits, suspensions, outbox, ledger, backups',
  },
  subCommands: {
    orgs: () => import('./commands/orgs.js').then((m) => m.orgsCommand),
    credits: () => import('./commands/credits.js').then((m) => m.creditsCommand),
    suspend: () => import('./commands/suspend.js').then((m) => m.suspendCommand),
    unsuspend: () => import('./commands/suspend.js').then((m) => m.unsuspendCommand),
    outbox: () => import('./commands/outbox.js').then((m) => m.outboxCommand),
    ledger: () => import('./commands/ledger.js').then((m) => m.ledgerCommand),
    payouts: () => import('./commands/payouts.js').then((m) => m.payoutsCommand),
    'migrate-to-postgres': () => import('./commands/migrate-to-postgres.js').then((m) => m.migrateToPostgresCommand),
    backup: () => import('./commands/backup.js').then((m) => m.backupCommand),
  },
});

await runMain(main);
