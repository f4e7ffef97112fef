/** 0022_narrow_usage on PostgreSQL: the same case as test/unit/db/migration-0022.test.ts (SQLite). */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { openPostgres, type PgHandles } from '../../../core/db/database.js';
import { postgresAvailable, usePostgresDatabase } from '../../helpers/postgres.js';
import { usageMigrationCase } from '../../helpers/usage-migration.js';

describe.skipIf(!postgresAvailable())('migration 0022_narrow_usage (PostgreSQL)', () => {
  const pgdb = usePostgresDatabase();
  let h: PgHandles;
  beforeAll(() => {
    h = openPostgres(pgdb.get());
  });
  afterAll(() => h?.close());

  it('migrates old usage rows to the narrow row, readable by id, and back', async () => {
    await usageMigrationCase(h.db);
  }, 120_000);
});
