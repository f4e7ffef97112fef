/** `svc billing portal`: the billing portal URL. */
import { PortalResultSchema } from '../../../core/schemas/billing.schemas.js';
import { api } from '../../client.js';
import { svcCommand } from '../../command.js';
import { openInBrowser } from '../../open-url.js';

export default svcCommand({
  meta: { name: 'portal', description: 'Open the billing portal' },
  examples: ['svc billing portal'],
  async run() {
    const r = await api('POST', '/v1/billing/portal', PortalResultSchema);
    await openInBrowser(r.portal_url, 'Manage your cards and invoices on this page');
    return { data: r, human: '' };
  },
});
