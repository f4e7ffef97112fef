/** `svc profile show|update`: the org's own provider profile. */
import { ProviderProfileSchema } from '../../core/schemas/providers.schemas.js';
import { api } from '../client.js';
import { svcCommand } from '../command.js';
import { usageError } from '../failure.js';
import { describe } from '../output.js';

const FIELDS = [
  ['slug', 'slug'],
  ['display-name', 'display_name'],
  ['bio', 'bio'],
  ['website', 'website'],
  ['logo-url', 'logo_url'],
] as const;

const show = svcCommand({
  meta: { name: 'show', description: 'Show your provider profile' },
  examples: ['svc profile show'],
  async run() {
    const r = await api('GET', '/v1/provider/profile', ProviderProfileSchema);
    return { data: r, human: () => describe(r) };
  },
});

const update = svcCommand({
  meta: { name: 'update', description: 'Change your provider profile' },
  args: {
    slug: { type: 'string', description: 'Public slug' },
    'display-name': { type: 'string', description: 'Shown name' },
    bio: { type: 'string', description: 'About you' },
    website: { type: 'string', description: 'Your site' },
    'logo-url': { type: 'string', description: 'Logo image URL' },
  },
  examples: ['svc profile update --display-name "Acme APIs" --website https://acme.example'],
  async run({ args }) {
    const body: Record<string, string> = {};
    for (const [flag, field] of FIELDS) {
      const v = args[flag];
      if (v !== undefined) body[field] = v;
    }
    if (Object.keys(body).length === 0) throw usageError('nothing to change: pass at least one field flag');
    const r = await api('PATCH', '/v1/provider/profile', ProviderProfileSchema, { body });
    return { data: r, human: () => describe(r) };
  },
});

export default svcCommand({
  meta: { name: 'profile', description: 'Your org profile (show, update)' },
  examples: ['svc profile show'],
  subCommands: { show: async () => show, update: async () => update },
});
