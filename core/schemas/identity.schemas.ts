/**
 * Who a credential belongs to (GET /v1/me, control/orgs/me.service.ts). Shared by the REST route, the service,
 * MCP tools and the CLI. Plain zod: importing this registers nothing.
 */
import { z } from 'zod';
import { ALL_SCOPES } from '../scopes.js';
import { CentsAmount, Timestamp } from './common.schemas.js';

export const MeSchema = z
  .object({
    org: z.object({
      id: z.string(),
      name: z.string(),
      status: z.enum(['active', 'suspended']),
      origin: z.enum(['register', 'signup', 'login', 'admin']),
      email: z.string().nullable(),
      email_verified: z.boolean(),
      created_at: Timestamp,
    }),
    user: z
      .object({ id: z.string(), email: z.string(), name: z.string().nullable(), role: z.enum(['owner', 'admin']) })
      .nullable()
      .meta({ description: 'null for an API key no person created (anonymous registration)' }),
    roles: z.array(z.enum(['owner', 'admin'])),
    credential: z.object({
      type: z.enum(['api_key', 'session']),
      key_id: z.string().nullable(),
      session_id: z.string().nullable(),
      scopes: z.array(z.enum(ALL_SCOPES)),
    }),
    balance: z.object({ credit_cents: CentsAmount, pending_cents: CentsAmount }),
  })
  .meta({ id: 'Me' });
export type Me = z.infer<typeof MeSchema>;
