/** Profile tools: the public provider directory, and your own provider profile (provider:write). */
import { z } from 'zod';
import { defineTool, READ, WRITE } from '../tool-kit.js';
import {
  getMyProfile,
  listProviders,
  providerPage,
  toProfile,
  updateMyProfile,
} from '../../control/providers/profile.service.js';
import { PAGE_DEFAULT_LIMIT } from '../../core/schemas/common.schemas.js';
import {
  ProviderDirectorySchema,
  ProviderPageSchema,
  ProviderProfileSchema,
  ProfileUpdateInputSchema,
} from '../../core/schemas/providers.schemas.js';

export const profileTools = [
  defineTool({
    name: 'list_providers',
    title: 'Provider directory',
    description: 'The public provider directory with live listings. Free. Next: get_provider_profile.',
    input: z.object({
      query: z.string().max(200).optional(),
      limit: z.number().int().min(1).max(100).optional().describe('Default 20'),
      offset: z.number().int().min(0).max(10_000).optional(),
    }),
    output: ProviderDirectorySchema,
    annotations: READ,
    run: async (a, env) =>
      listProviders(env.ctx.db, env.caller.principal, {
        query: a.query,
        limit: a.limit ?? PAGE_DEFAULT_LIMIT,
        offset: a.offset ?? 0,
      }),
  }),
  defineTool({
    name: 'get_provider_profile',
    title: 'A provider',
    description: "A provider's public profile and live listings. Free.",
    input: z.object({ slug: z.string().min(1).max(80) }),
    output: ProviderPageSchema,
    annotations: READ,
    run: async (a, env) => providerPage(env.ctx.db, env.caller.principal, a.slug),
  }),
  defineTool({
    name: 'get_my_profile',
    title: 'My provider profile',
    description: "Your org's provider profile; none until update_my_profile or a first publish. Free.",
    input: z.object({}),
    output: ProviderProfileSchema,
    annotations: READ,
    scope: 'provider:write',
    run: async (_a, env) => {
      return toProfile(await getMyProfile(env.ctx, env.caller.principal));
    },
  }),
  defineTool({
    name: 'update_my_profile',
    title: 'Edit my provider profile',
    description: 'Edits your public provider profile: slug, display_name, bio, website, logo_url (null clears). Free.',
    input: ProfileUpdateInputSchema,
    output: ProviderProfileSchema,
    annotations: { ...WRITE, idempotentHint: true },
    scope: 'provider:write',
    run: async (a, env) => {
      return toProfile(await updateMyProfile(env.ctx, env.caller.principal, a));
    },
  }),
];
