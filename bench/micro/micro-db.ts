/** A fresh migrated SQLite file with one consumer org (credits) and one provider listing, for the micro-benchmarks. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrateToLatest } from '../../core/db/migrate.js';
import { openTestDb, seedOrg, grantCredits, seedListing, type SeededOrg } from '../../test/helpers/db.js';

export interface MicroDb {
  dir: string;
  file: string;
  consumer: SeededOrg;
  providerOrgId: string;
  apiId: string;
  endpointId: string;
  cleanup(): void;
}

export async function microDb(creditCents: number): Promise<MicroDb> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-micro-'));
  const h = openTestDb(dir);
  try {
    await migrateToLatest(h.db);
    const provider = await seedOrg(h);
    const consumer = await seedOrg(h);
    await grantCredits(h, consumer.orgId, creditCents, 'bench credits');
    const { apiId, endpointIds } = await seedListing(h, {
      orgId: provider.orgId,
      slug: 'bench-micro',
      baseUrl: 'http://127.0.0.1:9',
      endpoints: [{ method: 'GET', path: '/items/{id}', priceCents: 1 }],
    });
    return {
      dir,
      file: join(dir, 'svc.db'),
      consumer,
      providerOrgId: provider.orgId,
      apiId,
      endpointId: endpointIds[0]!,
      cleanup: () => rmSync(dir, { recursive: true, force: true }),
    };
  } finally {
    h.close();
  }
}

/** Imports a compiled gateway module by path at run time, so the bench still builds while the gateway's API moves. */
export async function importGateway<T>(rel: string): Promise<T> {
  const url = new URL(`../../gateway/${rel}`, import.meta.url).href;
  return (await import(url)) as T;
}
