/** `svc provision [slug]`: make sure a key is configured (registering one if not), optionally checking a listing. */
import { api, config } from '../client.js';
import { str, svcCommand } from '../command.js';
import { saveConfig } from '../config-store.js';

export default svcCommand({
  meta: { name: 'provision', description: 'Ensure an API key is configured (registers one if needed)' },
  args: { slug: { type: 'positional', required: false, description: 'A listing you are about to call' } },
  examples: ['svc provision demo-weather'],
  async run({ args }) {
    let created = false;
    let keyId: string | null = null;
    if (!config().apiKey) {
      const reg = await api<{ api_key: string; key_id: string }>('POST', '/v1/register', { auth: 'none' });
      saveConfig({ apiKey: reg.api_key });
      created = true;
      keyId = reg.key_id;
    }
    const slug = str(args, 'slug');
    const listing = slug
      ? await api<{ slug: string; name: string }>('GET', `/v1/apis/${encodeURIComponent(slug)}`, { hint: { slug } })
      : null;
    const data = { key_created: created, key_id: keyId, slug: listing?.slug ?? null };
    const lines = [
      created ? `Registered a new key ${keyId}, stored in ${config().file}.` : 'A key is already configured.',
    ];
    if (listing) lines.push(`${listing.slug} is live: svc inspect ${listing.slug} --endpoints`);
    return { data, human: lines.join('\n') };
  },
});
