/**
 * After a session sign-in, a stored API key (what `svc call` sends to the gateway) must belong to the session's
 * org. A key of another org (an earlier `svc register`, or another account) would leave `svc call` spending from
 * that org while `svc balance` and `svc billing checkout` act on this one: a newcomer who registers, signs in and
 * buys credits would still be refused with 402. So such a key is set aside as `previousApiKey` (keys are shown
 * once, so it is kept, not dropped) and a key is created for the session's org. With no key stored, sign-in adds
 * none (a provider may never call the gateway; `svc logout` then leaves nothing behind); `svc provision` does.
 */
import { MeSchema } from '../core/schemas/identity.schemas.js';
import { CreatedKeySchema } from '../core/schemas/keys.schemas.js';
import { api, reloadConfig } from './client.js';
import { readStored, saveConfig } from './config-store.js';
import { CliFailure } from './failure.js';

/** The name of the key a sign-in creates; `svc logout --all` revokes a stored key of that name. */
export const CLI_KEY_NAME = 'svc CLI';

export interface SessionKey {
  /** The stored key now, or null when none is stored (sign-in without a key, and createIfMissing false). */
  key_id: string | null;
  /** A key was created for the session's org (none was stored, or the stored one was another org's or dead). */
  key_created: boolean;
  /** The org of the key set aside as previousApiKey, when there was one. */
  previous_key_org_id: string | null;
}

/** The org of a key, or null when the server no longer accepts it (revoked, or from another installation). */
async function _orgOfKey(key: string): Promise<{ orgId: string; keyId: string } | null> {
  try {
    const me = await api('GET', '/v1/me', MeSchema, { token: key });
    return me.credential.key_id ? { orgId: me.org.id, keyId: me.credential.key_id } : null;
  } catch (e) {
    if (e instanceof CliFailure && e.status === 401) return null;
    throw e;
  }
}

/**
 * Makes a stored key one of `orgId`'s (the signed-in session's org), creating one when none is stored only if
 * `createIfMissing`; a line for a person when anything changed.
 */
export async function keyForSessionOrg(
  orgId: string,
  opts: { createIfMissing: boolean },
): Promise<{ data: SessionKey; human: string | null }> {
  // Only the file's key: an SVC_API_KEY in the environment wins over it anyway and is not ours to replace.
  const stored = readStored().apiKey;
  if (!stored && !opts.createIfMissing) {
    return { data: { key_id: null, key_created: false, previous_key_org_id: null }, human: null };
  }
  const current = stored ? await _orgOfKey(stored) : null;
  if (current?.orgId === orgId) {
    return { data: { key_id: current.keyId, key_created: false, previous_key_org_id: null }, human: null };
  }
  const created = await api('POST', '/v1/keys', CreatedKeySchema, {
    auth: 'session',
    body: { name: CLI_KEY_NAME },
  });
  saveConfig({ apiKey: created.api_key, ...(current ? { previousApiKey: stored } : {}) });
  const file = reloadConfig().file;
  const lines = [`Created key ${created.key.id} for this org; \`svc call\` uses it (stored in ${file}).`];
  if (current) lines.push(`The key stored before belongs to org ${current.orgId}; it is kept as previousApiKey.`);
  return {
    data: { key_id: created.key.id, key_created: true, previous_key_org_id: current?.orgId ?? null },
    human: lines.join('\n'),
  };
}
