/**
 * Key, org and listing loads on a cache miss, on PostgreSQL (the caches' async sources; on SQLite the caches
 * prepare the same statements and load synchronously). Each is one round trip: the listing's three reads go out
 * together in one read-only transaction (pipeline mode), so the api row, its endpoints and its terms are one snapshot.
 */
import type { AsyncKeySource, KeyRow, OrgRow } from '../cache/key-cache.js';
import type { ApiRow, AsyncListingSource, EndpointRow, TermsRow } from '../cache/listing-cache.js';
import { sql, type Pg } from './connect.js';

export function pgKeySource(db: Pg): AsyncKeySource {
  return {
    async key(hash) {
      const [row] = await db.rows<KeyRow>(sql`
        SELECT id, org_id, key_hash, scopes, approval_mode, budget_cents, per_call_max_cents, daily_cap_cents,
               rate_limit_per_min, revoked_at
        FROM api_keys WHERE key_hash = ${hash}`);
      return row;
    },
    async org(orgId) {
      const [row] = await db.rows<OrgRow>(sql`SELECT id, status, email_verified_at FROM orgs WHERE id = ${orgId}`);
      return row;
    },
  };
}

export function pgListingSource(db: Pg): AsyncListingSource {
  return {
    async listing(slug) {
      const [apis, endpoints, terms] = (
        await db.pipeline([
          sql`SET TRANSACTION READ ONLY`,
          sql`SELECT id, org_id, slug, base_url, status, suspended_at, secret_enc, injection, injection_name
            FROM apis WHERE slug = ${slug}`,
          sql`SELECT e.id, e.method, e.path, e.price_cents, e.discounts_json
            FROM endpoints e JOIN apis a ON a.id = e.api_id
            WHERE a.slug = ${slug} AND e.removed_at IS NULL ORDER BY e.position`,
          sql`SELECT d.id, d.acceptance_mode FROM legal_documents d JOIN apis a ON a.id = d.api_id
            WHERE a.slug = ${slug} AND d.status = 'activated'
            ORDER BY d.activated_at DESC, d.created_at DESC LIMIT 1`,
        ])
      ).slice(1) as [ApiRow[], EndpointRow[], TermsRow[]];
      const api = apis[0];
      return api ? { api, endpoints, terms: terms[0] } : undefined;
    },
    async accepted(orgId, docId) {
      const rows = await db.rows(
        sql`SELECT id FROM terms_acceptances WHERE org_id = ${orgId} AND document_id = ${docId}`,
      );
      return rows.length > 0;
    },
    async monthCalls(orgId, endpointId, monthStart) {
      const [r] = await db.rows<{ n: number }>(sql`
        SELECT count(*) AS n FROM usage_calls
        WHERE org_num = (SELECT num FROM id_nums WHERE id = ${orgId})
          AND endpoint_num = (SELECT num FROM id_nums WHERE id = ${endpointId})
          AND created_at >= ${monthStart} AND charged_cents > 0`);
      return r!.n;
    },
  };
}
