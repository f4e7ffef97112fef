/** `admin suspend|unsuspend org|listing <id>`: takes effect on running gateways through the change feed. */
import { defineCommand } from 'citty';
import { recordChange } from '../../../core/db/changes.js';
import { fail, jsonArg, print, withAdminContext } from '../admin-context.js';

function target(suspend: boolean, what: 'org' | 'listing') {
  return defineCommand({
    meta: {
      name: what,
      description: `${suspend ? 'Suspend' : 'Unsuspend'} an ${what === 'org' ? 'org (all its keys stop working)' : 'API listing (by api_id or slug)'}`,
    },
    args: {
      ...jsonArg,
      id: { type: 'positional', required: true, description: what === 'org' ? 'org_id' : 'api_id or slug' },
      reason: { type: 'string', description: 'Why' },
    },
    run: ({ args }) =>
      withAdminContext(async ({ db, clock }) => {
        const now = clock.now();
        if (what === 'org') {
          const res = await db.transaction().execute(async (trx) => {
            const r = await trx
              .updateTable('orgs')
              .set({ status: suspend ? 'suspended' : 'active', status_reason: suspend ? (args.reason ?? null) : null })
              .where('id', '=', args.id)
              .executeTakeFirst();
            if (r.numUpdatedRows > 0n) await recordChange(trx, 'org', args.id, now);
            return r.numUpdatedRows;
          });
          if (res === 0n) fail(`no org ${args.id}`);
        } else {
          const api = await db
            .selectFrom('apis')
            .select('id')
            .where((eb) => eb.or([eb('id', '=', args.id), eb('slug', '=', args.id)]))
            .executeTakeFirst();
          if (!api) fail(`no listing ${args.id}`);
          await db.transaction().execute(async (trx) => {
            await trx
              .updateTable('apis')
              .set({
                suspended_at: suspend ? now : null,
                suspended_reason: suspend ? (args.reason ?? null) : null,
                updated_at: now,
              })
              .where('id', '=', api.id)
              .execute();
            await recordChange(trx, 'api', api.id, now);
          });
        }
        print(args.json, { id: args.id, suspended: suspend }, [
          `${what} ${args.id} ${suspend ? 'suspended' : 'active again'}`,
        ]);
      }),
  });
}

export const suspendCommand = defineCommand({
  meta: { name: 'suspend', description: 'Suspend an org or a listing' },
  subCommands: { org: target(true, 'org'), listing: target(true, 'listing') },
});
export const unsuspendCommand = defineCommand({
  meta: { name: 'unsuspend', description: 'Lift a suspension' },
  subCommands: { org: target(false, 'org'), listing: target(false, 'listing') },
});
