/**
 * Catalog reads are public: no credential needed (docs/catalog.md). A credential that is sent must be valid
 * (the authenticate middleware already refused bad ones) and must carry `catalog:read`.
 */
import type { Context } from 'hono';
import type { AppEnv } from '../lib/http.js';
import type { Principal } from '../auth/principal.js';
import { requireScope } from '../auth/rest-auth.js';

export function catalogReader(c: Context<AppEnv>): Principal | undefined {
  return c.get('principal') ? requireScope(c, 'catalog:read') : undefined;
}
