/** What the authorization server knows about a client, whichever way it became known. */
import type { Row } from '../../core/db/database.js';

export interface OAuthClient {
  clientId: string;
  kind: Row<'oauth_clients'>['kind'];
  /** Self-asserted: pages show it marked as unverified. */
  clientName: string | null;
  redirectUris: string[];
}

export function toOAuthClient(row: Row<'oauth_clients'>): OAuthClient {
  return {
    clientId: row.id,
    kind: row.kind,
    clientName: row.client_name,
    redirectUris: JSON.parse(row.redirect_uris) as string[],
  };
}
