/**
 * Global setup of the PostgreSQL pass (vitest.pg.config.ts): one throwaway PostgreSQL 15 cluster for the run
 * (test/helpers/postgres.ts), named to the test workers by SVC_TEST_PG_ADMIN_URL; every test data dir then gets a
 * database of its own on it (databaseUrlFor). Stopped and removed after the run.
 */
import { startPostgres, type PgCluster } from './postgres.js';

let cluster: PgCluster | undefined;

export async function setup(): Promise<void> {
  cluster = await startPostgres({ settings: { max_connections: 400 } });
  process.env.SVC_TEST_PG_ADMIN_URL = cluster.url('postgres');
  process.env.SVC_TEST_STORE = 'postgres';
}

export async function teardown(): Promise<void> {
  await cluster?.stop();
}
