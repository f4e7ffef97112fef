/**
 * Arranges what the gateway targets need: a migrated data dir with a provider's live listing (one paid
 * endpoint pointing at the stub), a consumer org with ample credits and a key; starts the gateway pinned.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { migrateToLatest } from '../core/db/migrate.js';
import { openPostgres } from '../core/db/database.js';
import { openTestDb, seedOrg, grantCredits, seedListing } from '../test/helpers/db.js';
import { startPinned, type Pinned } from './procs.js';

export const ROOT = resolve(import.meta.dirname, '..', '..');

export const PRICE_CENTS = 1;
/** Enough for every paid call of a full run (tens of millions of cents: a few hundred thousand calls per round at most). */
export const CREDIT_CENTS = 1_000_000_000;

export interface Seeded {
  dataDir: string;
  slug: string;
  /** Gateway path of the paid endpoint (after the gateway origin). */
  path: string;
  key: string;
  keyId: string;
  orgId: string;
  providerOrgId: string;
  apiId: string;
}

/** `databaseUrl`: seed that PostgreSQL database instead of the data dir's SQLite file (the `paid-pg` target). */
export async function seedDataDir(stubUrl: string, label: string, databaseUrl?: string): Promise<Seeded> {
  const dataDir = mkdtempSync(join(tmpdir(), `svc-bench-${label}-`));
  const h = databaseUrl ? openPostgres(databaseUrl, { max: 1 }) : openTestDb(dataDir);
  try {
    await migrateToLatest(h.db);
    const provider = await seedOrg(h);
    const consumer = await seedOrg(h);
    await grantCredits(h, consumer.orgId, CREDIT_CENTS, 'bench credits');
    const slug = 'bench-stub';
    const { apiId } = await seedListing(h, {
      orgId: provider.orgId,
      slug,
      baseUrl: stubUrl,
      endpoints: [{ method: 'GET', path: '/items/{id}', priceCents: PRICE_CENTS }],
    });
    return {
      dataDir,
      slug,
      path: `/${slug}/items/42`,
      key: consumer.key,
      keyId: consumer.keyId,
      orgId: consumer.orgId,
      providerOrgId: provider.orgId,
      apiId,
    };
  } finally {
    await h.close();
  }
}

/** `svc_live_` + 24 characters that no key has. */
export function unknownKey(): string {
  return 'svc_live_' + randomBytes(18).toString('base64url').slice(0, 24);
}

export interface GatewayOptions {
  metering: boolean;
  cpus: string;
  /** Extra NODE_OPTIONS, e.g. the event-loop-delay probe preload. */
  nodeOptions?: string;
  /** Flags for node itself (e.g. --cpu-prof, which NODE_OPTIONS refuses). */
  nodeArgs?: string[];
  env?: Record<string, string>;
}

/** The stub upstream (stub-upstream.ts) as its own process pinned to `cpus`. */
export function startStub(cpus: string): Promise<Pinned> {
  return startPinned('stub-upstream', cpus, process.execPath, [join(ROOT, 'dist', 'bench', 'stub-upstream.js')], {
    PATH: process.env.PATH ?? '',
  });
}

export function startGateway(seed: Seeded, name: string, opts: GatewayOptions): Promise<Pinned> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    SVC_ENV: 'development',
    SVC_DEMO: 'false',
    SVC_LOG_LEVEL: 'warn',
    SVC_DATA_DIR: seed.dataDir,
    SVC_HOST: '127.0.0.1',
    SVC_GATEWAY_PORT: '0',
    SVC_GATEWAY_WORKERS: '1',
    SVC_GATEWAY_METERING: opts.metering ? 'on' : 'off',
    ...(opts.nodeOptions ? { NODE_OPTIONS: opts.nodeOptions } : {}),
    ...opts.env,
  };
  return startPinned(
    name,
    opts.cpus,
    process.execPath,
    [...(opts.nodeArgs ?? []), join(ROOT, 'dist', 'gateway', 'main.js')],
    env,
    30_000,
  );
}
