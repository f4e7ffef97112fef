/**
 * 428 `terms_not_accepted` refusals recorded on PostgreSQL (the SQLite form joins the settle batch:
 * gateway/terms-refusals.ts). Here the upsert is one statement of its own off the hot path (the refusal is answered
 * at once), at most once per (org, API, document) per window and process; a failed write is only logged.
 */
import type { TermsRefusalSink } from '../terms-refusals.js';
import { sql, type Pg } from './connect.js';

const WINDOW_MS = 10 * 60_000;
const MAX_REMEMBERED = 10_000;

export class PgTermsRefusals implements TermsRefusalSink {
  readonly #recent = new Map<string, number>();

  constructor(
    private readonly db: Pg,
    private readonly onError: (e: unknown) => void,
  ) {}

  record(orgId: string, apiId: string, documentId: string, now: number): void {
    const key = `${orgId}\u0000${apiId}\u0000${documentId}`;
    const last = this.#recent.get(key);
    if (last !== undefined && now - last < WINDOW_MS) return;
    if (this.#recent.size >= MAX_REMEMBERED) this.#recent.clear();
    this.#recent.set(key, now);
    this.db
      .rows(sql`
        INSERT INTO terms_refusals (org_id, api_id, document_id, first_refused_at, last_refused_at)
        VALUES (${orgId}, ${apiId}, ${documentId}, ${now}, ${now})
        ON CONFLICT (org_id, api_id) DO UPDATE SET document_id = excluded.document_id,
          last_refused_at = excluded.last_refused_at`)
      .catch((e: unknown) => {
        this.#recent.delete(key);
        this.onError(e);
      });
  }
}
