/** `svc billing portal`: the billing portal URL. */
import { api } from '../../client.js';
import { svcCommand } from '../../command.js';
import { openInBrowser } from '../../open-url.js';

export default svcCommand({
  meta: { name: 'portal', description: 'Open the billing portal' },
  examples: ['svc billing portal'],
  async run() {
    const r = await api<{ portal_url: string }>('POST', '/v1/billing/portal');
    await openInBrowser(r.portal_url);
    return { data: r, human: '' };
  },
});
