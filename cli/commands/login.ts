/**
 * `svc login`: in the browser by default (login-browser.ts), a pasted key (`--key -` reads stdin), or a one-time
 * code by mail (`--email`, then `--code`; on a terminal the code is prompted for). A session sign-in also makes
 * sure a stored key is one of the session's org (session-key.ts), so `svc call` spends what `svc balance` shows.
 */
import { AcceptedSchema, LoginResultSchema, MeSchema } from '../../core/schemas/identity.schemas.js';
import { api, config, reloadConfig } from '../client.js';
import { svcCommand } from '../command.js';
import { saveConfig } from '../config-store.js';
import { CliFailure, usageError } from '../failure.js';
import { interactive } from '../output.js';
import { readStdin } from '../read-stdin.js';
import { keyForSessionOrg } from '../session-key.js';

const KEY_FORMAT = /^svc_live_[A-Za-z0-9]{24}$/;

export default svcCommand({
  meta: {
    name: 'login',
    description: 'Log in in the browser, or paste a key (--key -), or use a mailed code (--email)',
  },
  args: {
    key: { type: 'string', description: "An API key to store; '-' reads it from stdin (keeps it out of history)" },
    email: { type: 'string', description: 'Mail a 6-digit login code to this address' },
    code: { type: 'string', description: 'The 6-digit code from the mail (with --email)' },
    'no-browser': { type: 'boolean', description: 'Show a code to enter in any browser instead (SSH, CI)' },
  },
  examples: [
    'svc login',
    'svc login --no-browser',
    'printf %s "$SVC_KEY" | svc login --key -',
    'svc login --email ada@example.com',
    'svc login --email ada@example.com --code 123456',
  ],
  async run({ args }) {
    const { key, email } = args;
    if (key !== undefined) return loginWithKey(key === '-' ? (await readStdin()).toString('utf8').trim() : key);
    let { code } = args;
    if (code && !email) throw usageError('--code needs --email');
    if (!email) {
      const flow = await import('../login-browser.js');
      const s = args['no-browser'] || flow.noBrowserHere() ? await flow.deviceLogin() : await flow.loopbackLogin();
      return signedIn(s.session_token, s.org_id, { org_id: s.org_id, expires_at: s.expires_at }, 'Logged in');
    }
    if (!code) {
      await api('POST', '/v1/auth/login/request', AcceptedSchema, { auth: 'none', body: { email } });
      if (!interactive())
        return {
          data: { status: 'code_sent', email },
          human: `A 6-digit code is on its way to ${email}.\nNext: svc login --email ${email} --code <code>`,
        };
      const p = await import('@clack/prompts');
      const v = await p.text({ message: `Code sent to ${email}` });
      if (p.isCancel(v) || !v) throw usageError('cancelled');
      code = v.trim();
    }
    const r = await api('POST', '/v1/auth/login/verify', LoginResultSchema, {
      auth: 'none',
      body: { email, code },
      hint: { email },
    });
    const { session_token: token, ...shown } = r;
    return signedIn(token, r.org_id, shown, `Logged in as ${email}`);
  },
});

/** Stores a new session, then makes a stored key one of its org's (session-key.ts). */
async function signedIn<D extends object>(token: string, orgId: string, data: D, headline: string) {
  saveConfig({ sessionToken: token });
  reloadConfig();
  const stored = await keyForSessionOrg(orgId, { createIfMissing: false });
  const lines = [`${headline} (org ${orgId}); session stored in ${config().file}`];
  if (stored.human) lines.push(stored.human);
  return { data: { ...data, ...stored.data }, human: lines.join('\n') };
}

async function loginWithKey(key: string) {
  if (!KEY_FORMAT.test(key)) throw usageError('that is not an API key (svc_live_ followed by 24 characters)');
  // Check the key before storing it, so a typo is caught now rather than on the first call.
  const me = await api('GET', '/v1/me', MeSchema, { token: key });
  saveConfig({ apiKey: key });
  reloadConfig();
  if (!me.credential?.key_id) throw new CliFailure('api', 'unauthorized', 'The key was not accepted', 401, 'svc login');
  return {
    data: { org_id: me.org.id, key_id: me.credential.key_id },
    human: `Key ${me.credential.key_id} of org ${me.org.id} stored in ${config().file}`,
  };
}
