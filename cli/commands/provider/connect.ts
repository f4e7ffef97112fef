/** `svc provider connect`: payout onboarding (a human completes identity verification in the browser). */
import { ConnectOnboardResultSchema } from '../../../core/schemas/billing.schemas.js';
import { api } from '../../client.js';
import { svcCommand } from '../../command.js';
import { openInBrowser } from '../../open-url.js';

export default svcCommand({
  meta: { name: 'connect', description: 'Set up payouts (opens the onboarding page)' },
  examples: ['svc provider connect'],
  async run() {
    const r = await api('POST', '/v1/provider/connect', ConnectOnboardResultSchema);
    await openInBrowser(r.onboarding_url, 'Finish the identity verification on this page');
    return { data: r, human: '' };
  },
});
