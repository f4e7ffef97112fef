/**
 * Records calls refused with 428 `terms_not_accepted` (migration 0014_terms_refusals), so the dashboard's "terms
 * awaiting acceptance" lists the APIs an org tried to call. Cheap on the hot path: the refusal is answered at once;
 * the upsert joins the settle writer's next batch (no commit of its own) and is skipped when this process already
 * recorded the same (org, API, document) within the window. A failed write is only logged: a refusal record is
 * a hint for the dashboard, never money.
 */
import type Sqlite from 'better-sqlite3';
import type { SettleWriter } from './settle-writer.js';

/** How often one process re-records the same refusal (moves `last_refused_at`). */
const WINDOW_MS = 10 * 60_000;
/** Entries remembered before the memory is cleared (bounded: one entry per refused org and API). */
const MAX_REMEMBERED = 10_000;

export interface TermsRefusalSink {
  record(orgId: string, apiId: string, documentId: string, now: number): void;
}

export class TermsRefusals implements TermsRefusalSink {
  readonly #upsert: Sqlite.Statement;
  readonly #recent = new Map<string, number>();

  constructor(
    sqlite: Sqlite.Database,
    private readonly writer: SettleWriter,
    private readonly onError: (e: unknown) => void,
  ) {
    this.#upsert = sqlite.prepare(
      `INSERT INTO terms_refusals (org_id, api_id, document_id, first_refused_at, last_refused_at)
       VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (org_id, api_id) DO UPDATE SET document_id = excluded.document_id,
         last_refused_at = excluded.last_refused_at`,
    );
  }

  record(orgId: string, apiId: string, documentId: string, now: number): void {
    const key = `${orgId}\u0000${apiId}\u0000${documentId}`;
    const last = this.#recent.get(key);
    if (last !== undefined && now - last < WINDOW_MS) return;
    if (this.#recent.size >= MAX_REMEMBERED) this.#recent.clear();
    this.#recent.set(key, now);
    this.writer
      .join(() => this.#upsert.run(orgId, apiId, documentId, now, now))
      .catch((e: unknown) => {
        this.#recent.delete(key);
        this.onError(e);
      });
  }
}
