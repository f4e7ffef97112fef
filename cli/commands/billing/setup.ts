/** `svc billing setup`: a card setup page for a human to confirm. */
import { CardSetupResultSchema } from '../../../core/schemas/billing.schemas.js';
import { api } from '../../client.js';
import { svcCommand } from '../../command.js';
import { openInBrowser } from '../../open-url.js';

export default svcCommand({
  meta: { name: 'setup', description: 'Add a card (opens a page where you confirm it)' },
  examples: ['svc billing setup'],
  async run() {
    const r = await api('POST', '/v1/billing/setup', CardSetupResultSchema);
    await openInBrowser(r.setup_url, 'Confirm the card on this page');
    return { data: r, human: '' };
  },
});
