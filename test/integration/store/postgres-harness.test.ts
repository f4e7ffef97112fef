/**
 * The throwaway PostgreSQL of test/helpers/postgres.ts: a real server on a loopback port, a fresh database per
 * file, fsync on, and a crash restart (`-m immediate`) that keeps committed rows.
 */
import { describe, expect, it } from 'vitest';
import { databaseName, postgresAvailable, startPostgres, usePostgresDatabase } from '../../helpers/postgres.js';

describe.skipIf(!postgresAvailable())('test PostgreSQL harness', () => {
  const pg = usePostgresDatabase();

  it('gives the file a fresh, empty database of its own', async () => {
    const url = pg.get();
    expect(url).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/svc_/);
    const tables = await pg
      .cluster()
      .psql(`SELECT count(*) FROM pg_tables WHERE schemaname = 'public'`, databaseName(url));
    expect(tables.trim()).toBe('0');
  });

  it('starts a cluster of its own with fsync on, and committed rows survive a crash restart', {
    timeout: 180_000,
  }, async () => {
    const c = await startPostgres();
    try {
      expect((await c.psql('SHOW fsync')).trim()).toBe('on');
      expect((await c.psql('SHOW server_version_num')).trim() >= '150000').toBe(true);
      const url = await c.createDatabase('crash_me');
      await c.psql('CREATE TABLE t (n bigint); INSERT INTO t VALUES (41), (1)', 'crash_me');
      await c.restart('immediate');
      expect((await c.psql('SELECT sum(n) FROM t', databaseName(url))).trim()).toBe('42');
    } finally {
      await c.stop();
    }
    // stop() removed the cluster's files.
    const { existsSync } = await import('node:fs');
    expect(existsSync(c.dir)).toBe(false);
  });
});
