/**
 * `svc provision [slug]`: make sure a key is configured, optionally checking a listing. Signed in, the key is one
 * of the session's org (session-key.ts); without a session, an agent key of a new org is registered.
 */
import { ListingDetailSchema } from '../../core/schemas/catalog.schemas.js';
import { MeSchema, RegistrationSchema } from '../../core/schemas/identity.schemas.js';
import { api, config } from '../client.js';
import { svcCommand } from '../command.js';
import { saveConfig } from '../config-store.js';
import { keyForSessionOrg } from '../session-key.js';

export default svcCommand({
  meta: { name: 'provision', description: 'Ensure an API key is configured (registers one if needed)' },
  args: { slug: { type: 'positional', required: false, description: 'A listing you are about to call' } },
  examples: ['svc provision demo-weather'],
  async run({ args }) {
    let created = false;
    let keyId: string | null = null;
    if (!config().apiKey && config().sessionToken) {
      const me = await api('GET', '/v1/me', MeSchema, { auth: 'session' });
      const key = await keyForSessionOrg(me.org.id, { createIfMissing: true });
      created = key.data.key_created;
      keyId = key.data.key_id;
    } else if (!config().apiKey) {
      const reg = await api('POST', '/v1/register', RegistrationSchema, { auth: 'none' });
      saveConfig({ apiKey: reg.api_key });
      created = true;
      keyId = reg.key_id;
    }
    const { slug } = args;
    const listing = slug
      ? await api('GET', `/v1/apis/${encodeURIComponent(slug)}`, ListingDetailSchema, { hint: { slug } })
      : null;
    const data = { key_created: created, key_id: keyId, slug: listing?.slug ?? null };
    const lines = [created ? `Created key ${keyId}, stored in ${config().file}.` : 'A key is already configured.'];
    if (listing) lines.push(`${listing.slug} is live: svc inspect ${listing.slug} --endpoints`);
    return { data, human: lines.join('\n') };
  },
});
