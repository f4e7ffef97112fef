/**
 * Wire shapes of the OAuth 2.1 authorization server (control/oauth): what a client sends to register (RFC 7591)
 * or publishes as its Client ID Metadata Document, and what the token endpoint answers. Imports only zod.
 */
import { z } from 'zod';

const RedirectUris = z.array(z.string().max(2000)).min(1).max(10);

export const ClientRegistrationRequest = z
  .object({
    redirect_uris: RedirectUris,
    client_name: z.string().trim().min(1).max(100).optional(),
    client_uri: z.string().url().max(2000).optional(),
    logo_uri: z.string().url().max(2000).optional(),
    grant_types: z.array(z.string()).max(5).optional(),
    response_types: z.array(z.string()).max(5).optional(),
    token_endpoint_auth_method: z.string().max(50).optional(),
    scope: z.string().max(1000).optional(),
    software_id: z.string().max(200).optional(),
    software_version: z.string().max(100).optional(),
  })
  .passthrough();

export const ClientRegistrationResponse = z.object({
  client_id: z.string(),
  client_id_issued_at: z.number().int(),
  client_name: z.string().optional(),
  redirect_uris: z.array(z.string()),
  grant_types: z.array(z.string()),
  response_types: z.array(z.string()),
  /** Every client is public: PKCE protects the code instead of a secret. */
  token_endpoint_auth_method: z.literal('none'),
  scope: z.string().optional(),
});
export type ClientRegistrationResponse = z.infer<typeof ClientRegistrationResponse>;

export const ClientMetadataDocument = z
  .object({
    client_id: z.string(),
    client_name: z.string().trim().min(1).max(100).optional(),
    redirect_uris: RedirectUris,
    token_endpoint_auth_method: z.string().optional(),
    client_secret: z.unknown().optional(),
  })
  .passthrough();
export type ClientMetadataDocument = z.infer<typeof ClientMetadataDocument>;

export const TokenResponse = z.object({
  access_token: z.string(),
  token_type: z.literal('Bearer'),
  /** Seconds. */
  expires_in: z.number().int(),
  refresh_token: z.string(),
  /** Space-separated svc scopes the grant carries. */
  scope: z.string(),
});
export type TokenResponse = z.infer<typeof TokenResponse>;
