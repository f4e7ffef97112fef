/**
 * The cross-process change feed. Control-plane writes that a running gateway caches (key revoke or caps,
 * org credit or suspension, listing price/state, terms) append a row here in the same transaction;
 * gateways poll `PRAGMA data_version` and read rows past their last seq (gateway/cache.ts).
 */
import type { ChangeEntity, Db } from './database.js';

export async function recordChange(db: Db, entity: ChangeEntity, entityId: string, now: number): Promise<void> {
  await db.insertInto('changes').values({ entity, entity_id: entityId, created_at: now }).execute();
}
