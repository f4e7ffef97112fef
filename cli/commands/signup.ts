/** `svc signup`: web signup by email (refused in production: the CLI cannot carry a bot-challenge token). */
import { AcceptedSchema } from '../../core/schemas/identity.schemas.js';
import { api } from '../client.js';
import { svcCommand } from '../command.js';

export default svcCommand({
  meta: { name: 'signup', description: 'Sign up with an email (development only); a verification token is mailed' },
  args: {
    email: { type: 'string', required: true, description: 'Your email' },
    name: { type: 'string', description: 'Your name' },
  },
  examples: ['svc signup --email ada@example.com --name Ada'],
  async run({ args }) {
    const body = { email: args.email, ...(args.name ? { name: args.name } : {}) };
    const r = await api('POST', '/v1/signup', AcceptedSchema, { auth: 'none', body });
    return { data: r, human: `${r.message}\nNext: svc verify --token <token from the mail>` };
  },
});
