/** `svc whoami`: GET /v1/me with the configured credential (session first). */
import { MeSchema } from '../../core/schemas/identity.schemas.js';
import { api } from '../client.js';
import { svcCommand } from '../command.js';
import { dollars } from '../output.js';

export default svcCommand({
  meta: { name: 'whoami', description: 'Show the org, user and credential in use' },
  examples: ['svc whoami --json'],
  async run() {
    const me = await api('GET', '/v1/me', MeSchema);
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
