/** `svc whoami`: GET /v1/me with the configured credential (session first). */
import { api } from '../client.js';
import { svcCommand } from '../command.js';
import { dollars } from '../output.js';

interface Me {
  org: { id: string; name: string; email: string | null; email_verified: boolean };
  user: { email: string; role: string } | null;
  credential: { type: string; key_id: string | null; scopes: string[] };
  balance: { credit_cents: number };
}

export default svcCommand({
  meta: { name: 'whoami', description: 'Show the org, user and credential in use' },
  examples: ['svc whoami --json'],
  async run() {
    const me = await api<Me>('GET', '/v1/me');
    const who = me.user ? `${me.user.email} (${me.user.role})` : 'anonymous agent';
    return {
      data: me,
      human: [
        `org         ${me.org.id}  ${me.org.name}`,
        `user        ${who}`,
        `credential  ${me.credential.type}${me.credential.key_id ? ` ${me.credential.key_id}` : ''}`,
        `scopes      ${me.credential.scopes.join(', ')}`,
        `balance     ${dollars(me.balance.credit_cents)}`,
      ].join('\n'),
    };
  },
});
