/** `admin orgs list`: every org with its balance, status and key count. */
import { defineCommand } from 'citty';
import { sql } from 'kysely';
import { jsonArg, print, withAdminContext } from '../admin-context.js';

const list = defineCommand({
  meta: { name: 'list', description: 'List orgs (newest first)' },
  args: { ...jsonArg, limit: { type: 'string', description: 'Max rows', default: '100' } },
  run: ({ args }) =>
    withAdminContext(async ({ db }) => {
      const rows = await db
        .selectFrom('orgs')
        .leftJoin('balances', 'balances.org_id', 'orgs.id')
        .select([
          'orgs.id',
          'orgs.name',
          'orgs.origin',
          'orgs.status',
          'orgs.email',
          'balances.credit_cents',
          'balances.pending_cents',
          sql<number>`(SELECT COUNT(*) FROM api_keys k WHERE k.org_id = orgs.id AND k.revoked_at IS NULL)`.as(
            'active_keys',
          ),
        ])
        .orderBy('orgs.created_at', 'desc')
        .limit(Number.parseInt(args.limit, 10) || 100)
        .execute();
      print(
        args.json,
        rows,
        rows.map(
          (r) =>
            `${r.id}  ${r.status.padEnd(9)} ${String(r.credit_cents ?? 0).padStart(8)}c  keys=${r.active_keys}  ${r.origin.padEnd(8)} ${r.email ?? r.name}`,
        ),
      );
    }),
});

export const orgsCommand = defineCommand({ meta: { name: 'orgs', description: 'Orgs' }, subCommands: { list } });
