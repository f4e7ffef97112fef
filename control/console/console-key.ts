/**
 * The org's console key: an ordinary API key (hashed in `api_keys`, listed on the keys page, capped, revocable)
 * named "Try-it console (web)", with only `proxy:call`. The console service presents it to the gateway, so its
 * plaintext is kept encrypted with the server key in `console_keys` (migration 0023_console_keys; AES-256-GCM from core/crypto.ts,
 * as upstream secrets are). It never leaves the control plane: no page, answer or log carries it.
 * Created on first use; a revoked key (or one the server key can no longer decrypt) is replaced on the next use.
 */
import { utcDay } from '../../core/clock.js';
import { decryptSecret, encryptSecret } from '../../core/crypto.js';
import type { Db, Row } from '../../core/db/database.js';
import type { ConsoleKeyView } from '../../core/schemas/console.schemas.js';
import { insertKey, markKeyRevoked } from '../keys/keys.service.js';

export const CONSOLE_KEY_NAME = 'Try-it console (web)';
/** The daily cap offered when the key is created, in cents (the person can change it in the form). */
export const DEFAULT_CONSOLE_DAILY_CAP_CENTS = 500;

interface ConsoleKeyRow {
  /** The linked key when it is still active (not revoked). */
  key: Row<'api_keys'> | undefined;
  linkedKeyId: string;
  secret: string;
}

/** The org's console key link, with its key row when that key is not revoked. */
async function _link(db: Db, orgId: string): Promise<ConsoleKeyRow | undefined> {
  const link = await db.selectFrom('console_keys').selectAll().where('org_id', '=', orgId).executeTakeFirst();
  if (!link) return undefined;
  const key = await db
    .selectFrom('api_keys')
    .selectAll()
    .where('id', '=', link.key_id)
    .where('org_id', '=', orgId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return { key, linkedKeyId: link.key_id, secret: link.key_secret };
}

async function _current(db: Db, orgId: string): Promise<(ConsoleKeyRow & { key: Row<'api_keys'> }) | undefined> {
  const link = await _link(db, orgId);
  return link?.key ? { ...link, key: link.key } : undefined;
}

/** What the console shows about the key: its name, display start, daily cap and today's spend. No secret. */
export async function consoleKeyView(db: Db, orgId: string, now: number): Promise<ConsoleKeyView | null> {
  const cur = await _current(db, orgId);
  if (!cur) return null;
  const spent = await db
    .selectFrom('key_daily_spend')
    .select('spent_cents')
    .where('key_id', '=', cur.key.id)
    .where('day', '=', utcDay(now))
    .executeTakeFirst();
  return {
    key_id: cur.key.id,
    name: cur.key.name,
    start: cur.key.start,
    daily_cap_cents: cur.key.daily_cap_cents,
    spent_today_cents: spent?.spent_cents ?? 0,
  };
}

function _decrypt(secretKey: Buffer, stored: string): string | undefined {
  try {
    return decryptSecret(secretKey, stored);
  } catch {
    return undefined;
  }
}

/**
 * The console key's id and plaintext, minted on first use with `dailyCapCents` (the person's choice, or the
 * default). One per org: the `console_keys` primary key makes a concurrent first use keep one key (the loser's
 * insert fails, its whole transaction rolls back, its minted key with it, and it reads the winner's).
 */
export async function ensureConsoleKey(
  db: Db,
  secretKey: Buffer,
  person: { orgId: string; userId: string },
  dailyCapCents: number | null | undefined,
  now: number,
): Promise<{ keyId: string; plaintext: string }> {
  for (let attempt = 0; ; attempt++) {
    const link = await _link(db, person.orgId);
    const plaintext = link?.key ? _decrypt(secretKey, link.secret) : undefined;
    if (link?.key && plaintext !== undefined) return { keyId: link.key.id, plaintext };
    try {
      return await db.transaction().execute(async (trx) => {
        if (link) {
          // Revoked by the person, or undecryptable under the current server key (then retired here, rather than
          // kept as a key nobody can present): the link is replaced. Deleting by the old key id means a concurrent
          // first use that replaced it already makes the insert below conflict, and this attempt reads theirs.
          if (link.key) await markKeyRevoked(trx, link.key.id, now);
          await trx
            .deleteFrom('console_keys')
            .where('org_id', '=', person.orgId)
            .where('key_id', '=', link.linkedKeyId)
            .execute();
        }
        const { row, plaintext: minted } = await insertKey(
          trx,
          {
            orgId: person.orgId,
            name: CONSOLE_KEY_NAME,
            scopes: ['proxy:call'],
            origin: 'created',
            createdByUserId: person.userId,
            daily_cap_cents: dailyCapCents === undefined ? DEFAULT_CONSOLE_DAILY_CAP_CENTS : dailyCapCents,
          },
          now,
        );
        const secret = encryptSecret(secretKey, minted);
        await trx
          .insertInto('console_keys')
          .values({ org_id: person.orgId, key_id: row.id, key_secret: secret, created_at: now })
          .execute();
        return { keyId: row.id, plaintext: minted };
      });
    } catch (e) {
      // Another request of the same org created it at the same moment: read theirs.
      if (attempt >= 2) throw e;
    }
  }
}
