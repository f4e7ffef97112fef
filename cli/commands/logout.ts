/** `svc logout [--all]`: ends the session on the server and forgets it; `--all` also forgets the stored key. */
import { api, config } from '../client.js';
import { svcCommand } from '../command.js';
import { saveConfig } from '../config-store.js';
import { CliFailure } from '../failure.js';

export default svcCommand({
  meta: { name: 'logout', description: 'End the session (server side too); --all also clears the stored API key' },
  args: { all: { type: 'boolean', description: 'Also remove the stored API key' } },
  examples: ['svc logout', 'svc logout --all'],
  async run({ args }) {
    const session = config().sessionToken;
    let ended = false;
    if (session) {
      try {
        await api('POST', '/v1/auth/logout', { auth: 'session' });
        ended = true;
      } catch (e) {
        // An already ended or expired session is the state we want; anything else is a real failure.
        if (!(e instanceof CliFailure && e.code === 'unauthorized')) throw e;
      }
    }
    saveConfig({ sessionToken: null, ...(args.all ? { apiKey: null } : {}) });
    const data = { session_ended: ended, key_cleared: Boolean(args.all) };
    const human = [session ? 'Logged out.' : 'No session was stored.', args.all ? 'Stored API key removed.' : '']
      .filter(Boolean)
      .join(' ');
    return { data, human };
  },
});
