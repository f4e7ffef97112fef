/**
 * Sessions of the 2025-11-25 era: `Mcp-Session-Id` minted on initialize, stored only as sha256 with the key bound
 * to it (encrypted: call_api sends it to the gateway). Any MCP process can serve any session, and a session
 * survives a restart. A session bound to a key lives 30 days after its last use (spec §8). No client sends
 * DELETE at exit, so a session with no key bound (a health check, a keyless start) lives a day after its last use:
 * one that is never used again is gone within a day. Binding a key gives the session the 30 days. Expired rows are
 * swept.
 */
import { randomUUID } from 'node:crypto';
import type Sqlite from 'better-sqlite3';
import { LRUCache } from 'lru-cache';
import type { AppContext } from '../control/context.js';
import { decryptSecret, encryptSecret, sha256Hex } from '../core/crypto.js';

export const SESSION_TTL_MS = 30 * 86_400_000;
/** The idle lifetime of a session with no key bound. */
export const UNBOUND_SESSION_TTL_MS = 86_400_000;
const ttl = (keyId: string | null) => (keyId === null ? UNBOUND_SESSION_TTL_MS : SESSION_TTL_MS);
/** last_used_at is rewritten at most this often, so a busy session does not write on every request. */
const TOUCH_EVERY_MS = 60_000;

export interface McpSession {
  id: string;
  keyId: string | null;
  key: string | null;
  protocolVersion: string;
}

type SessionCtx = Pick<AppContext, 'db' | 'sqlite' | 'clock' | 'secretKey'>;

interface SessionRow {
  id_hash: string;
  key_id: string | null;
  key_secret: string | null;
  protocol_version: string;
  last_used_at: number;
  expires_at: number;
}

export class McpSessionStore {
  /** The lookup every 2025-era request makes: one prepared statement, read synchronously (no query building). */
  readonly #byHash: (idHash: string) => SessionRow | undefined | Promise<SessionRow | undefined>;
  /**
   * Decrypted keys by their stored ciphertext (AES-GCM with a fresh IV, so a ciphertext names one encryption of
   * one key): the row is still read on every request (it is the truth: ended, expired, re-bound), only the
   * decryption (~40 µs per request, issue 11 item 7) is skipped. Never stale: another key means another ciphertext.
   */
  readonly #keys = new LRUCache<string, string>({ max: 10_000 });

  constructor(private readonly ctx: SessionCtx) {
    const sqlText =
      'SELECT id_hash, key_id, key_secret, protocol_version, last_used_at, expires_at FROM mcp_sessions WHERE id_hash = ?';
    if (ctx.sqlite) {
      const stmt: Sqlite.Statement<[string], SessionRow> = ctx.sqlite.prepare<[string], SessionRow>(sqlText);
      this.#byHash = (h) => stmt.get(h);
    } else {
      // PostgreSQL (SVC_DATABASE_URL): the same read through kysely.
      this.#byHash = (h) =>
        ctx.db
          .selectFrom('mcp_sessions')
          .select(['id_hash', 'key_id', 'key_secret', 'protocol_version', 'last_used_at', 'expires_at'])
          .where('id_hash', '=', h)
          .executeTakeFirst();
    }
  }

  async create(protocolVersion: string, key: { id: string; plaintext: string } | null): Promise<McpSession> {
    const id = randomUUID();
    const now = this.ctx.clock.now();
    await this.ctx.db
      .insertInto('mcp_sessions')
      .values({
        id_hash: sha256Hex(id),
        key_id: key?.id ?? null,
        key_secret: key ? encryptSecret(this.ctx.secretKey, key.plaintext) : null,
        protocol_version: protocolVersion,
        created_at: now,
        last_used_at: now,
        expires_at: now + ttl(key?.id ?? null),
      })
      .execute();
    return { id, keyId: key?.id ?? null, key: key?.plaintext ?? null, protocolVersion };
  }

  /** The live session with this id, or undefined when it never existed, was ended or expired. */
  async get(id: string): Promise<McpSession | undefined> {
    const now = this.ctx.clock.now();
    const row = await this.#byHash(sha256Hex(id));
    if (!row || row.expires_at <= now) return undefined;
    if (now - row.last_used_at >= TOUCH_EVERY_MS) {
      await this.ctx.db
        .updateTable('mcp_sessions')
        .set({ last_used_at: now, expires_at: now + ttl(row.key_id) })
        .where('id_hash', '=', row.id_hash)
        .execute();
    }
    return {
      id,
      keyId: row.key_id,
      key: row.key_secret === null ? null : this.#decrypted(row.key_secret),
      protocolVersion: row.protocol_version,
    };
  }

  #decrypted(ciphertext: string): string {
    let key = this.#keys.get(ciphertext);
    if (key === undefined) {
      key = decryptSecret(this.ctx.secretKey, ciphertext);
      this.#keys.set(ciphertext, key);
    }
    return key;
  }

  /** Binds a key to the session: later requests without Authorization act as it; it now keeps the 30 days. */
  async bindKey(id: string, key: { id: string; plaintext: string }): Promise<void> {
    await this.ctx.db
      .updateTable('mcp_sessions')
      .set({
        key_id: key.id,
        key_secret: encryptSecret(this.ctx.secretKey, key.plaintext),
        expires_at: this.ctx.clock.now() + SESSION_TTL_MS,
      })
      .where('id_hash', '=', sha256Hex(id))
      .execute();
  }

  /**
   * Drops the key bound to the session (it stopped working): later requests act as their own credential, and the
   * session has an unbound session's lifetime.
   */
  async unbindKey(id: string): Promise<void> {
    await this.ctx.db
      .updateTable('mcp_sessions')
      .set({ key_id: null, key_secret: null, expires_at: this.ctx.clock.now() + UNBOUND_SESSION_TTL_MS })
      .where('id_hash', '=', sha256Hex(id))
      .execute();
  }

  /** DELETE /mcp: true when a live session was ended. */
  async end(id: string): Promise<boolean> {
    const r = await this.ctx.db.deleteFrom('mcp_sessions').where('id_hash', '=', sha256Hex(id)).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  async sweep(): Promise<number> {
    const r = await this.ctx.db
      .deleteFrom('mcp_sessions')
      .where('expires_at', '<=', this.ctx.clock.now())
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
