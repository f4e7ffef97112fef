/**
 * An import's database writes: the endpoint row shape (new listings and re-imports), and the new listing's endpoint
 * rows and search index written by the import worker through its own SQLite connection, so a 22,000-operation
 * import costs the control plane's event loop nothing. SQLite has one writer at a time and a waiting writer on the
 * main thread blocks its event loop (better-sqlite3 is synchronous), so the worker holds the write lock only briefly
 * per transaction and leaves it free at least as long between them.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type Sqlite from 'better-sqlite3';
import { sql } from 'kysely';
import { openDatabase, openPostgres, type Db, type NewRow } from '../../core/db/database.js';
import { dialectOf } from '../../core/db/dialect.js';
import { newId } from '../../core/ids.js';
import type { HeavyParts } from './import-job.js';
import type { ImportedEndpoint } from './openapi-import.js';

/** Where the worker writes a new listing's endpoints: the listing (a draft, already inserted) and its time. */
export interface StoreTarget {
  dbFile: string;
  /** SVC_DATABASE_URL: the worker writes to PostgreSQL instead (storeNewListingPg). */
  databaseUrl?: string | undefined;
  apiId: string;
  now: number;
}

export interface StoreStats {
  store_ms: number;
  transactions: number;
  /** The longest time the worker held SQLite's write lock (one transaction, or the search-index refresh). */
  longest_lock_ms: number;
  /** Lock held writing the document and the schema components (one value each: tens of MB for the largest). */
  document_ms: number;
  /** Lock held indexing the paths for search. */
  index_ms: number;
}

/** A transaction ends once it has held the write lock this long (rows are written one statement each). */
const LOCK_BUDGET_MS = 4;
/** And after each one the lock stays free at least this long, so a waiting writer elsewhere gets its turn. */
const MIN_PAUSE_MS = 2;

/** The columns an import sets on an endpoint, new or matched. */
export function importedFields(ep: ImportedEndpoint, position: number, now: number) {
  return {
    operation_id: ep.operationId,
    summary: ep.summary,
    description: ep.description,
    parameters_json: ep.parametersJson,
    request_schema_json: ep.requestSchemaJson,
    response_schema_json: ep.responseSchemaJson,
    position,
    updated_at: now,
  };
}

export function endpointRow(apiId: string, ep: ImportedEndpoint, position: number, now: number): NewRow<'endpoints'> {
  return {
    id: newId('ep', now),
    api_id: apiId,
    method: ep.method,
    path: ep.path,
    removed_at: null,
    created_at: now,
    ...importedFields(ep, position, now),
  };
}

/** Stops the per-row search triggers for this listing while its endpoints are written (migration 0007). */
export async function deferSearchPaths(trx: Db, apiId: string): Promise<void> {
  await sql`INSERT INTO fts_deferred (api_id) VALUES (${apiId}) ON CONFLICT DO NOTHING`.execute(trx);
}

/** Indexes the listing's endpoint paths for search once, and lets the per-row triggers run again. */
export async function refreshSearchPaths(trx: Db, apiId: string): Promise<void> {
  await sql`DELETE FROM fts_deferred WHERE api_id = ${apiId}`.execute(trx);
  // PostgreSQL's search reads the listing text through its GIN index: there are no FTS paths to write.
  if (dialectOf(trx) === 'postgres') return;
  await sql`UPDATE apis_fts SET paths = coalesce((SELECT group_concat(path, ' ') FROM endpoints
              WHERE api_id = ${apiId} AND removed_at IS NULL), '')
            WHERE rowid = (SELECT rowid FROM apis WHERE id = ${apiId})`.execute(trx);
}

/**
 * Writes a new listing's document and schema components, its endpoints in short transactions, then its search-index
 * paths (one statement: FTS5 re-tokenizes a row on every update, so adding paths chunk by chunk would cost the
 * square of it). The listing is a draft and in `fts_deferred` meanwhile; on failure the caller deletes it
 * (`discardNewListing`).
 */
export async function storeNewListing(target: StoreTarget, parts: HeavyParts): Promise<StoreStats> {
  if (target.databaseUrl) return storeNewListingPg(target, target.databaseUrl, parts);
  const t0 = performance.now();
  const { db, sqlite, close } = openDatabase(target.dbFile);
  const { endpoints } = parts;
  try {
    const componentsJson = JSON.stringify(parts.components);
    const documentHeld = locked(sqlite, () => {
      sqlite
        .prepare('UPDATE apis SET openapi_gz = ?, schema_components_json = ? WHERE id = ?')
        .run(Buffer.from(parts.documentGzip), componentsJson, target.apiId);
    });
    const row = (i: number) => endpointRow(target.apiId, endpoints[i]!, i, target.now);
    // The statement is prepared only when there are rows to write (every operation may have been skipped).
    let insert: Sqlite.Statement | undefined;
    const insertRow = (i: number): void => {
      const values = row(i);
      const columns = Object.keys(values);
      insert ??= sqlite.prepare(
        `INSERT INTO endpoints (${columns.join(', ')}) VALUES (${columns.map((c) => `@${c}`).join(', ')})`,
      );
      insert.run(values);
    };
    let transactions = 1;
    let longest = documentHeld;
    await sleep(Math.max(MIN_PAUSE_MS, documentHeld));
    let next = 0;
    while (next < endpoints.length) {
      const held = locked(sqlite, () => {
        const start = performance.now();
        do {
          insertRow(next);
          next++;
        } while (next < endpoints.length && performance.now() - start < LOCK_BUDGET_MS);
      });
      transactions++;
      longest = Math.max(longest, held);
      await sleep(Math.max(MIN_PAUSE_MS, held));
    }
    const indexStart = performance.now();
    await db.transaction().execute((trx) => refreshSearchPaths(trx, target.apiId));
    const index_ms = performance.now() - indexStart;
    return {
      store_ms: Math.round(performance.now() - t0),
      transactions: transactions + 1,
      longest_lock_ms: +Math.max(longest, index_ms).toFixed(1),
      document_ms: +documentHeld.toFixed(1),
      index_ms: +index_ms.toFixed(1),
    };
  } finally {
    await close();
  }
}

/** Endpoint rows per transaction on PostgreSQL: row locks, not a file lock, so only the statement size bounds it. */
const PG_CHUNK = 500;

/**
 * PostgreSQL: the same writes through the worker's own small pool, endpoints in multi-row inserts of PG_CHUNK per
 * transaction (other writers are not blocked by them: PostgreSQL locks rows, not the database).
 */
async function storeNewListingPg(target: StoreTarget, url: string, parts: HeavyParts): Promise<StoreStats> {
  const t0 = performance.now();
  const { db, close } = openPostgres(url, { max: 1, applicationName: 'import' });
  try {
    let longest = 0;
    const timed = async (write: () => Promise<unknown>) => {
      const s = performance.now();
      await write();
      const ms = performance.now() - s;
      longest = Math.max(longest, ms);
      return ms;
    };
    const documentMs = await timed(() =>
      db
        .updateTable('apis')
        .set({ openapi_gz: Buffer.from(parts.documentGzip), schema_components_json: JSON.stringify(parts.components) })
        .where('id', '=', target.apiId)
        .execute(),
    );
    let transactions = 1;
    for (let i = 0; i < parts.endpoints.length; i += PG_CHUNK) {
      const rows = parts.endpoints
        .slice(i, i + PG_CHUNK)
        .map((ep, j) => endpointRow(target.apiId, ep, i + j, target.now));
      await timed(() => db.transaction().execute((trx) => trx.insertInto('endpoints').values(rows).execute()));
      transactions++;
    }
    const indexMs = await timed(() => db.transaction().execute((trx) => refreshSearchPaths(trx, target.apiId)));
    return {
      store_ms: Math.round(performance.now() - t0),
      transactions: transactions + 1,
      longest_lock_ms: +longest.toFixed(1),
      document_ms: +documentMs.toFixed(1),
      index_ms: +indexMs.toFixed(1),
    };
  } finally {
    await close();
  }
}

/** Runs `write` in one BEGIN IMMEDIATE transaction (busy_timeout applies to taking the lock); returns ms held. */
function locked(sqlite: Sqlite.Database, write: () => void): number {
  sqlite.exec('BEGIN IMMEDIATE');
  const start = performance.now();
  try {
    write();
    sqlite.exec('COMMIT');
  } catch (e) {
    if (sqlite.inTransaction) sqlite.exec('ROLLBACK');
    throw e;
  }
  return performance.now() - start;
}

/** Removes a listing whose import did not finish: its endpoints, its search deferral, the listing itself. */
export async function discardNewListing(db: Db, apiId: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('endpoints').where('api_id', '=', apiId).execute();
    await sql`DELETE FROM fts_deferred WHERE api_id = ${apiId}`.execute(trx);
    await trx.deleteFrom('apis').where('id', '=', apiId).execute();
  });
}

/**
 * Listings a new import left unfinished because the control process stopped while its worker wrote them: they are
 * still in `fts_deferred` outside any transaction (an import removes them when it finishes or fails). Run at control
 * start-up, before any import: a never-published listing is removed; any other only gets its search paths back.
 */
export async function discardUnfinishedImports(db: Db): Promise<string[]> {
  const unfinished = await db
    .selectFrom('apis')
    .select(['id', 'published_at'])
    .where('id', 'in', sql<string>`(SELECT api_id FROM fts_deferred)`)
    .execute();
  for (const api of unfinished)
    if (api.published_at === null) await discardNewListing(db, api.id);
    else await db.transaction().execute((trx) => refreshSearchPaths(trx, api.id));
  await sql`DELETE FROM fts_deferred WHERE api_id NOT IN (SELECT id FROM apis)`.execute(db);
  return unfinished.filter((a) => a.published_at === null).map((a) => a.id);
}
