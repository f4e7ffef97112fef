/**
 * Key, org and listing loads on a cache miss against a real PostgreSQL 15: the caches' async mode (warm, then
 * answer from memory), negative entries, concurrent misses sharing one load, and a change that arrives while a
 * load is in flight (the load must not cache what may be stale).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../../../gateway/pg/connect.js';
import { pgKeySource, pgListingSource } from '../../../../gateway/pg/lookups.js';
import { KeyCache, NotCachedError } from '../../../../gateway/cache/key-cache.js';
import { ListingCache } from '../../../../gateway/cache/listing-cache.js';
import { openPostgres, type PgHandles } from '../../../../core/db/database.js';
import { keyHashOf } from '../../../../gateway/steps/authenticate.js';
import { seedKey, seedListing, seedOrg } from '../../../helpers/db.js';
import { newId } from '../../../../core/ids.js';
import { pgUnavailable, useGatewayPg } from './pg-kit.js';

const why = pgUnavailable();
const env = useGatewayPg();
let h: PgHandles;

beforeAll(() => {
  if (!why) h = openPostgres(env.url(), { max: 2 });
});
afterAll(async () => {
  await h?.close();
});

async function settle(p: Promise<void> | null): Promise<void> {
  if (p) await p;
}

describe.skipIf(why)('gateway caches on PostgreSQL (async loads)', () => {
  it('loads a key and its org on a miss, then answers from memory; unknown keys are cached negatively', async () => {
    const org = await seedOrg(h);
    const { key, keyId } = await seedKey(h, org.orgId, { budgetCents: 500, scopes: ['proxy:call'] });
    const cache = new KeyCache(pgKeySource(env.admin()));
    expect(cache.async).toBe(true);
    const hash = keyHashOf('', key)!;
    expect(() => cache.byHash(hash)).toThrow(NotCachedError);
    const w = cache.warm(hash);
    expect(w).toBeInstanceOf(Promise);
    // A second miss of the same key while the first load is in flight shares it.
    expect(cache.warm(hash)).toBe(w);
    await w;
    expect(cache.warm(hash)).toBeNull();
    const rec = cache.byHash(hash)!;
    expect(rec).toMatchObject({ keyId, orgId: org.orgId, canCall: true, revoked: false, budgetCents: 500 });
    expect(cache.org(org.orgId)).toMatchObject({ suspended: false, emailVerified: true });

    const unknown = 'f'.repeat(64);
    await settle(cache.warm(unknown));
    expect(cache.warm(unknown)).toBeNull();
    expect(cache.byHash(unknown)).toBeUndefined();
    cache.clearUnknown(); // a new key was announced: the negative entry goes
    expect(cache.warm(unknown)).toBeInstanceOf(Promise);
  });

  it('a revoke that arrives while the key is loading is not hidden by the load', async () => {
    const org = await seedOrg(h);
    const { key, keyId } = await seedKey(h, org.orgId, { scopes: ['proxy:call'] });
    const cache = new KeyCache(pgKeySource(env.admin()));
    const hash = keyHashOf('', key)!;
    const w = cache.warm(hash)!;
    // The control plane revokes and the feed drops the key before the (older) load answers.
    await env.admin().rows(sql`UPDATE api_keys SET revoked_at = ${Date.now()} WHERE id = ${keyId}`);
    cache.dropKey(keyId);
    await w;
    const again = cache.warm(hash);
    expect(again).toBeInstanceOf(Promise);
    await again;
    expect(cache.byHash(hash)!.revoked).toBe(true);
  });

  it('loads a listing with its endpoints, terms acceptance and month call count; drops reload it', async () => {
    const provider = await seedOrg(h);
    const consumer = await seedOrg(h);
    const slug = `pg-${Math.random().toString(36).slice(2, 8)}`;
    const { apiId, endpointIds } = await seedListing(h, {
      orgId: provider.orgId,
      slug,
      baseUrl: 'http://127.0.0.1:1/v1/',
      endpoints: [
        { method: 'GET', path: '/items/{id}', priceCents: 5, discounts: [{ min_calls: 2, percent_off: 50 }] },
        { method: 'GET', path: '/items/me', priceCents: 1 },
      ],
    });
    const docId = newId('doc');
    const now = Date.now();
    await env.admin().rows(sql`
      INSERT INTO legal_documents (id, org_id, api_id, kind, source, version, markdown, acceptance_mode, status, created_at, activated_at)
      VALUES (${docId}, ${provider.orgId}, ${apiId}, 'terms', 'hosted', '1', 'terms', 'required', 'activated', ${now}, ${now})`);
    const cache = new ListingCache(pgListingSource(env.admin()), null);
    const month = Date.UTC(2026, 10, 1);
    expect(() => cache.bySlug(slug)).toThrow(NotCachedError);
    // One warm per missing piece: listing, then acceptance, then the month's count for the discounted endpoint.
    let loads = 0;
    for (let w = cache.warm(slug, consumer.orgId, 'GET', '/items/7', month); w; ) {
      loads++;
      await w;
      w = cache.warm(slug, consumer.orgId, 'GET', '/items/7', month);
    }
    expect(loads).toBe(3);
    const l = cache.bySlug(slug)!;
    expect(l).toMatchObject({ apiId, origin: 'http://127.0.0.1:1', basePath: '/v1', requiredTermsDocId: docId });
    expect(l.endpoints.map((e) => e.id)).toEqual([endpointIds[1], endpointIds[0]]); // most specific first
    expect(cache.termsAccepted(consumer.orgId, docId)).toBe(false);
    expect(cache.monthCalls(consumer.orgId, endpointIds[0]!, month)).toBe(0);
    // The provider's own org needs no acceptance: nothing to load for it but the count.
    await settle(cache.warm(slug, provider.orgId, 'GET', '/items/7', month));
    expect(cache.warm(slug, provider.orgId, 'GET', '/items/7', month)).toBeNull();

    await env.admin().rows(sql`
      INSERT INTO terms_acceptances (id, org_id, api_id, document_id, user_id, accepted_at)
      VALUES (${newId('acc')}, ${consumer.orgId}, ${apiId}, ${docId}, ${consumer.userId}, ${now})`);
    cache.dropTerms(apiId);
    while (true) {
      const w = cache.warm(slug, consumer.orgId, 'GET', '/items/7', month);
      if (!w) break;
      await w;
    }
    expect(cache.termsAccepted(consumer.orgId, docId)).toBe(true);

    await settle(cache.warm('no-such-slug', consumer.orgId, 'GET', '/', month));
    expect(cache.warm('no-such-slug', consumer.orgId, 'GET', '/', month)).toBeNull();
    expect(cache.bySlug('no-such-slug')).toBeNull();
  });
});
