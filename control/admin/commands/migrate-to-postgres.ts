/**
 * `svc-admin migrate-to-postgres <url>`: the data dir's SQLite database (SVC_DATA_DIR / SVC_DB_FILE) into an empty
 * PostgreSQL database, then the books checked on both and compared (control/admin/migrate-to-postgres.ts).
 * Exits 1 when the target is not empty or anything differs. Stop svc's processes first.
 */
import { defineCommand } from 'citty';
import { loadConfigOrExit } from '../../../core/config.js';
import { openDatabase, openPostgres } from '../../../core/db/database.js';
import { compareStores, copySqliteToPostgres, TargetNotEmptyError } from '../migrate-to-postgres.js';
import { fail, jsonArg } from '../admin-context.js';

export const migrateToPostgresCommand = defineCommand({
  meta: {
    name: 'migrate-to-postgres',
    description: 'Copy the SQLite database into an empty PostgreSQL database, then check the books on both',
  },
  args: {
    url: { type: 'positional', required: true, description: 'postgres://user@host:5432/database (empty)' },
    ...jsonArg,
  },
  run: async ({ args }) => {
    if (!/^postgres(ql)?:\/\//.test(args.url)) fail('the target must be a postgres:// URL');
    const config = loadConfigOrExit();
    const lite = openDatabase(config.dbFile);
    const pg = openPostgres(args.url, { max: 2, applicationName: 'migrate-to-postgres' });
    try {
      const copied = await copySqliteToPostgres(lite, pg);
      const check = await compareStores(lite, pg);
      if (args.json) {
        process.stdout.write(JSON.stringify({ ok: check.ok, data: { copied, check } }, null, 2) + '\n');
      } else {
        const lines = [
          `${check.ok ? 'OK' : 'MISMATCH'}: copied ${Object.values(copied).reduce((a, b) => a + b, 0)} rows in ${Object.keys(copied).length} tables`,
          `books: sqlite ${check.books.sqlite.ok ? 'ok' : 'MISMATCH'}, postgres ${check.books.postgres.ok ? 'ok' : 'MISMATCH'} (${check.books.postgres.orgs_checked} balances)`,
          ...Object.entries(check.totals).map(([f, t]) => `${f}: sqlite ${t.sqlite}, postgres ${t.postgres}`),
          ...check.differences.map((d) => `org ${d.org_id} ${d.figure}: sqlite ${d.sqlite}, postgres ${d.postgres}`),
          ...check.tables
            .filter((t) => t.sqlite !== t.postgres)
            .map((t) => `table ${t.table}: sqlite ${t.sqlite} rows, postgres ${t.postgres}`),
        ];
        process.stdout.write(lines.join('\n') + '\n');
      }
      if (!check.ok) process.exitCode = 1;
    } catch (e) {
      if (e instanceof TargetNotEmptyError) fail(e.message);
      throw e;
    } finally {
      await lite.close();
      await pg.close();
    }
  },
});
