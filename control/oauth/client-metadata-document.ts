/**
 * Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document): a client_id that is an https URL
 * names a JSON document describing the client. It is fetched through the SSRF-safe fetch (in development an http
 * loopback URL is allowed so tests can serve one), validated, and cached in oauth_clients for CLIENT_DOCUMENT_TTL_MS.
 */
import { ClientMetadataDocument } from '../../core/schemas/oauth.schemas.js';
import type { AppContext } from '../context.js';
import { safeFetch } from '../catalog/safe-fetch.js';
import { isSvcError } from '../../core/errors.js';
import { OAuthError } from './oauth-error.js';
import { redirectUriProblem } from './redirect-uri.js';
import { CLIENT_DOCUMENT_MAX_BYTES, CLIENT_DOCUMENT_TTL_MS } from './oauth-settings.js';
import { toOAuthClient, type OAuthClient } from './oauth-client.js';

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** True when the client_id is meant as a metadata document URL (as opposed to a registered `oc_…` id). */
export function looksLikeDocumentUrl(clientId: string): boolean {
  return /^https?:\/\//i.test(clientId);
}

function assertDocumentUrl(raw: string, production: boolean): void {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OAuthError('invalid_client', 'client_id is not a valid URL');
  }
  const loopbackHttp = url.protocol === 'http:' && LOOPBACK.has(url.hostname) && !production;
  if (url.protocol !== 'https:' && !loopbackHttp)
    throw new OAuthError('invalid_client', 'A client_id URL must use https');
  if (url.pathname === '/' || url.hash || url.username || url.password || /\/\.\.?(\/|$)/.test(url.pathname))
    throw new OAuthError(
      'invalid_client',
      'A client_id URL needs a path, and no fragment, credentials or dot segments',
    );
}

async function fetchDocument(ctx: Pick<AppContext, 'config'>, url: string): Promise<ClientMetadataDocument> {
  let text: string;
  try {
    const res = await safeFetch(url, {
      production: ctx.config.isProduction,
      egressAllow: ctx.config.egressAllow,
      // The document must be served at the client_id itself: a redirect would let another URL speak for it.
      maxRedirects: 0,
      headers: { accept: 'application/json' },
      timeoutMs: 5_000,
      maxBytes: CLIENT_DOCUMENT_MAX_BYTES,
    });
    if (res.status !== 200)
      throw new OAuthError('invalid_client', `The client metadata document answered HTTP ${res.status}`);
    text = res.text;
  } catch (e) {
    if (isSvcError(e))
      throw new OAuthError('invalid_client', `The client metadata document could not be fetched: ${e.detail}`);
    throw e;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new OAuthError('invalid_client', 'The client metadata document is not JSON');
  }
  const parsed = ClientMetadataDocument.safeParse(json);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new OAuthError(
      'invalid_client',
      `The client metadata document is invalid: ${first?.path.join('.')}: ${first?.message}`,
    );
  }
  const doc = parsed.data;
  if (doc.client_id !== url) throw new OAuthError('invalid_client', "The document's client_id differs from its URL");
  if (doc.client_secret !== undefined || (doc.token_endpoint_auth_method ?? 'none') !== 'none')
    throw new OAuthError('invalid_client', 'Only public clients (token_endpoint_auth_method "none") are supported');
  for (const uri of doc.redirect_uris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new OAuthError('invalid_client', `redirect_uris: ${problem}`);
  }
  return doc;
}

/** The client a document URL names: the cached copy while fresh, else fetched again (and the cache replaced). */
export async function clientFromDocument(
  ctx: Pick<AppContext, 'db' | 'clock' | 'config'>,
  url: string,
): Promise<OAuthClient> {
  assertDocumentUrl(url, ctx.config.isProduction);
  const now = ctx.clock.now();
  const cached = await ctx.db.selectFrom('oauth_clients').selectAll().where('id', '=', url).executeTakeFirst();
  if (cached && cached.fetched_at !== null && now - cached.fetched_at < CLIENT_DOCUMENT_TTL_MS)
    return toOAuthClient(cached);
  const doc = await fetchDocument(ctx, url);
  const row = {
    id: url,
    kind: 'metadata_document' as const,
    client_name: doc.client_name ?? null,
    redirect_uris: JSON.stringify(doc.redirect_uris),
    metadata: JSON.stringify(doc),
    created_at: cached?.created_at ?? now,
    fetched_at: now,
  };
  await ctx.db
    .insertInto('oauth_clients')
    .values(row)
    .onConflict((oc) =>
      oc.column('id').doUpdateSet({
        client_name: row.client_name,
        redirect_uris: row.redirect_uris,
        metadata: row.metadata,
        fetched_at: now,
      }),
    )
    .execute();
  return toOAuthClient(row);
}
