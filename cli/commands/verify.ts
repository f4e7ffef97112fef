/**
 * `svc verify --email` mails a verification token for this org's email (a registered agent org gets billing:write
 * and provider:write this way); `svc verify --token` exchanges it: releases withheld signup credit and elevates
 * registered keys. Verifying signs nobody in: when no credential is stored (the path after `svc signup`), the
 * answer says how to sign in, with the verified address filled in.
 */
import { AcceptedSchema, EmailVerifiedSchema } from '../../core/schemas/identity.schemas.js';
import { api, config } from '../client.js';
import { svcCommand } from '../command.js';
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
    const { email, token } = args;
    if ((email === undefined) === (token === undefined)) throw usageError('give exactly one of --email or --token');
    if (email !== undefined) {
      await api('POST', '/v1/auth/email', AcceptedSchema, { body: { email }, hint: { email } });
      return {
        data: { status: 'verification_sent', email },
        human: `A verification token is on its way to ${email}.\nNext: svc verify --token <token from the mail>`,
      };
    }
    const r = await api('POST', '/v1/auth/verify-email', EmailVerifiedSchema, { auth: 'none', body: { token } });
    const cfg = config();
    const signedIn = Boolean(cfg.sessionToken || cfg.apiKey);
    const next = signedIn ? null : `svc login --email ${r.email}`;
    const lines = [`Verified ${r.email}.`];
    if (r.released_credit_cents > 0) lines.push(`${dollars(r.released_credit_cents)} credited.`);
    if (r.elevated_key_ids.length > 0)
      lines.push(`Keys now also billing:write and provider:write: ${r.elevated_key_ids.join(', ')}`);
    if (next) lines.push(`Nothing is stored in ${cfg.file} yet; sign in to use this account.`, `Next: ${next}`);
    return { data: { ...r, signed_in: signedIn, next }, human: lines.join('\n') };
  },
});
