/** `svc provider connect`: payout onboarding (a human completes identity verification in the browser). */
import { api } from '../../client.js';
import { svcCommand } from '../../command.js';
import { openInBrowser } from '../../open-url.js';

export default svcCommand({
  meta: { name: 'connect', description: 'Set up payouts (opens the onboarding page)' },
  examples: ['svc provider connect'],
  async run() {
    const r = await api<{ onboarding_url: string }>('POST', '/v1/provider/connect');
    await openInBrowser(r.onboarding_url);
    return { data: r, human: 'Finish the identity verification in the browser page.' };
  },
});
