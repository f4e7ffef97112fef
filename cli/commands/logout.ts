/**
 * `svc logout [--all]`: ends the session on the server and forgets it. `--all` also forgets the stored keys
 * (`apiKey` and the `previousApiKey` a sign-in set aside) and revokes on the server the key a sign-in created for
 * this computer (named `svc CLI`, cli/session-key.ts): a key nobody holds any more must not stay live. Keys made
 * elsewhere (`svc register`, `svc keys create`, the dashboard) are forgotten here but not revoked.
 */
import { PageOf } from '../../core/schemas/common.schemas.js';
import { LogoutResultSchema, MeSchema } from '../../core/schemas/identity.schemas.js';
import { KeyResourceSchema } from '../../core/schemas/keys.schemas.js';
import { api, config } from '../client.js';
import { svcCommand } from '../command.js';
import { readStored, saveConfig } from '../config-store.js';
import { CliFailure } from '../failure.js';
import { note } from '../output.js';
import { CLI_KEY_NAME } from '../session-key.js';

export default svcCommand({
  meta: { name: 'logout', description: 'End the session (server side too); --all also clears the stored API keys' },
  args: { all: { type: 'boolean', description: 'Also remove the stored API keys (revoking the one sign-in made)' } },
  examples: ['svc logout', 'svc logout --all'],
  async run({ args }) {
    const session = config().sessionToken;
    const stored = readStored();
    const revoked = args.all && stored.apiKey ? await revokeCliKey(stored.apiKey, session) : null;
    let ended = false;
    if (session) {
      try {
        await api('POST', '/v1/auth/logout', LogoutResultSchema, { auth: 'session' });
        ended = true;
      } catch (e) {
        // An already ended or expired session is the state we want; anything else is a real failure.
        if (!(e instanceof CliFailure && e.code === 'unauthorized')) throw e;
      }
    }
    saveConfig({ sessionToken: null, ...(args.all ? { apiKey: null, previousApiKey: null } : {}) });
    const data = {
      session_ended: ended,
      key_cleared: args.all,
      previous_key_cleared: args.all && stored.previousApiKey !== undefined,
      key_revoked: revoked,
    };
    const human = [
      session ? 'Logged out.' : 'No session was stored.',
      args.all ? 'Stored API keys removed.' : '',
      revoked ? `Key ${revoked} (created by svc login) revoked.` : '',
    ]
      .filter(Boolean)
      .join(' ');
    return { data, human };
  },
});

/**
 * Revokes `key` when it is the `svc CLI` key of the session's org (or of its own org, with no session); answers its
 * id, or null when it is another key, already dead, or the server refuses (said on stderr, logout goes on).
 */
async function revokeCliKey(key: string, session: string | null): Promise<string | null> {
  const refused = (e: unknown) => e instanceof CliFailure && (e.status === 401 || e.status === 403);
  try {
    const me = await api('GET', '/v1/me', MeSchema, { token: key });
    const keyId = me.credential.key_id;
    const token = session ?? key;
    const keys = await api('GET', '/v1/keys', PageOf(KeyResourceSchema), { token, query: { limit: 100 } });
    const mine = keys.data.find((k) => k.id === keyId && k.name === CLI_KEY_NAME && k.revoked_at === null);
    if (!mine) return null;
    await api('DELETE', `/v1/keys/${encodeURIComponent(mine.id)}`, KeyResourceSchema, { token });
    return mine.id;
  } catch (e) {
    if (!refused(e)) throw e;
    note(
      `The stored key could not be revoked (${e instanceof CliFailure ? e.code : 'refused'}); it is forgotten here.`,
    );
    return null;
  }
}
