/** `admin outbox [--to email]`: read the development outbox (mail stored when no SMTP is configured). */
import { defineCommand } from 'citty';
import { jsonArg, print, withAdminContext } from '../admin-context.js';

export const outboxCommand = defineCommand({
  meta: { name: 'outbox', description: 'Show the newest mails of the development outbox' },
  args: {
    ...jsonArg,
    to: { type: 'string', description: 'Only mails to this address' },
    limit: { type: 'string', default: '10' },
  },
  run: ({ args }) =>
    withAdminContext(async ({ db }) => {
      let q = db
        .selectFrom('outbox')
        .selectAll()
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(Number.parseInt(args.limit, 10) || 10);
      if (args.to) q = q.where('to_addr', '=', args.to.toLowerCase());
      const rows = await q.execute();
      const out = rows.map((r) => ({
        id: r.id,
        to: r.to_addr,
        subject: r.subject,
        text: r.body_text,
        created_at: new Date(r.created_at).toISOString(),
      }));
      print(
        args.json,
        out,
        out.flatMap((m) => [`--- ${m.created_at}  to ${m.to}`, `Subject: ${m.subject}`, '', m.text]),
      );
    }),
});
