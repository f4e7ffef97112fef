/** `svc billing setup`: a card setup page for a human to confirm. */
import { api } from '../../client.js';
import { svcCommand } from '../../command.js';
import { openInBrowser } from '../../open-url.js';

export default svcCommand({
  meta: { name: 'setup', description: 'Add a card (opens a page where you confirm it)' },
  examples: ['svc billing setup'],
  async run() {
    const r = await api<{ setup_url: string }>('POST', '/v1/billing/setup');
    await openInBrowser(r.setup_url);
    return { data: r, human: 'Confirm the card in the browser page.' };
  },
});
