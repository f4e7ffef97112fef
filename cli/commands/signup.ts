/** `svc signup`: web signup by email (refused in production: the CLI cannot carry a bot-challenge token). */
import { api } from '../client.js';
import { str, svcCommand } from '../command.js';

export default svcCommand({
  meta: { name: 'signup', description: 'Sign up with an email (development only); a verification token is mailed' },
  args: {
    email: { type: 'string', required: true, description: 'Your email' },
    name: { type: 'string', description: 'Your name' },
  },
  examples: ['svc signup --email ada@example.com --name Ada'],
  async run({ args }) {
    const body = { email: str(args, 'email'), ...(str(args, 'name') ? { name: str(args, 'name') } : {}) };
    const r = await api<{ message: string }>('POST', '/v1/signup', { auth: 'none', body });
    return { data: r, human: `${r.message}\nThen: svc verify --token <token>` };
  },
});
