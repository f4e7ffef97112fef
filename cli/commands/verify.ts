/** `svc verify --token`: verify the email; releases withheld signup credit and elevates registered keys. */
import { api } from '../client.js';
import { str, svcCommand } from '../command.js';
import { dollars } from '../output.js';

export default svcCommand({
  meta: { name: 'verify', description: 'Exchange the email verification token' },
  args: { token: { type: 'string', required: true, description: 'The token from the verification mail' } },
  examples: ['svc verify --token vt_…'],
  async run({ args }) {
    const r = await api<{ email: string; released_credit_cents: number; elevated_key_ids: string[] }>(
      'POST',
      '/v1/auth/verify-email',
      { auth: 'none', body: { token: str(args, 'token') } },
    );
    const lines = [`Verified ${r.email}.`];
    if (r.released_credit_cents > 0) lines.push(`${dollars(r.released_credit_cents)} credited.`);
    if (r.elevated_key_ids.length > 0)
      lines.push(`Keys now also billing:write and provider:write: ${r.elevated_key_ids.join(', ')}`);
    return { data: r, human: lines.join('\n') };
  },
});
