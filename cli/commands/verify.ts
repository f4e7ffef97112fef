/**
 * `svc verify --email` mails a verification token for this org's email (a registered agent org gets billing:write
 * and provider:write this way); `svc verify --token` exchanges it: releases withheld signup credit and elevates
 * registered keys.
 */
import { api } from '../client.js';
import { str, svcCommand } from '../command.js';
import { usageError } from '../failure.js';
import { dollars } from '../output.js';

export default svcCommand({
  meta: { name: 'verify', description: "Verify this org's email: --email mails a token, --token exchanges it" },
  args: {
    email: { type: 'string', description: 'Mail a verification token to this address' },
    token: { type: 'string', description: 'The token from the verification mail' },
  },
  examples: ['svc verify --email ada@example.com', 'svc verify --token vt_…'],
  async run({ args }) {
    const email = str(args, 'email');
    const token = str(args, 'token');
    if ((email === undefined) === (token === undefined)) throw usageError('give exactly one of --email or --token');
    if (email !== undefined) {
      await api('POST', '/v1/auth/email', { body: { email }, hint: { email } });
      return {
        data: { status: 'verification_sent', email },
        human: `A verification token is on its way to ${email}.\nThen: svc verify --token <token from the mail>`,
      };
    }
    const r = await api<{ email: string; released_credit_cents: number; elevated_key_ids: string[] }>(
      'POST',
      '/v1/auth/verify-email',
      { auth: 'none', body: { token } },
    );
    const lines = [`Verified ${r.email}.`];
    if (r.released_credit_cents > 0) lines.push(`${dollars(r.released_credit_cents)} credited.`);
    if (r.elevated_key_ids.length > 0)
      lines.push(`Keys now also billing:write and provider:write: ${r.elevated_key_ids.join(', ')}`);
    return { data: r, human: lines.join('\n') };
  },
});
