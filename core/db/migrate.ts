/**
 * Applies the numbered migrations. Safe when several processes start at once: kysely runs them in one
 * transaction; on SQLite our transactions are BEGIN IMMEDIATE, so the second process reads the applied list only
 * after the first has committed, and on PostgreSQL kysely's Migrator holds an advisory lock while it migrates (run
 * it on a direct connection, not through a transaction-mode pooler: docs/scale-out.md).
 */
import { Migrator, type MigrationResultSet } from 'kysely';
import type { Db } from './database.js';
import { dialectOf } from './dialect.js';
import { migrationsFor } from './migrations/index.js';

export async function migrateToLatest(db: Db): Promise<MigrationResultSet> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrationsFor(dialectOf(db)) },
  });
  let lastError: unknown;
  // Creating kysely's bookkeeping tables happens outside the transaction; a racing twin can make it fail once.
  for (let attempt = 0; attempt < 5; attempt++) {
    const result = await migrator.migrateToLatest();
    if (!result.error) return result;
    lastError = result.error;
    await new Promise((r) => setTimeout(r, 50 * (attempt + 1)));
  }
  throw lastError instanceof Error ? lastError : new Error(`migration failed: ${String(lastError)}`);
}
