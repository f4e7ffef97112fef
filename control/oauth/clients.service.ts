/** Resolves a client_id to a client: a registered `oc_…` id from the table, or a metadata document URL. */
import type { AppContext } from '../context.js';
import { OAuthError } from './oauth-error.js';
import { toOAuthClient, type OAuthClient } from './oauth-client.js';
import { clientFromDocument, looksLikeDocumentUrl } from './client-metadata-document.js';

/** @public A client's public metadata by its id. */
export async function resolveClient(
  ctx: Pick<AppContext, 'db' | 'clock' | 'config'>,
  clientId: string,
): Promise<OAuthClient> {
  if (looksLikeDocumentUrl(clientId)) return clientFromDocument(ctx, clientId);
  const row = await ctx.db
    .selectFrom('oauth_clients')
    .selectAll()
    .where('id', '=', clientId)
    .where('kind', '=', 'registered')
    .executeTakeFirst();
  if (!row)
    throw new OAuthError('invalid_client', 'Unknown client_id: register it (RFC 7591) or use a metadata document URL');
  return toOAuthClient(row);
}
