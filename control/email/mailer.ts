/**
 * Outgoing mail: nodemailer over SMTP when SVC_SMTP_URL is set, else the development outbox
 * (stored in the `outbox` table and printed on stderr, so a local user can read their code).
 */
import nodemailer from 'nodemailer';
import type { Db } from '../../core/db/database.js';
import { newId } from '../../core/ids.js';
import type { Clock } from '../../core/clock.js';
import { counter } from '../../core/metrics.js';

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  /** `none`: a process that sends no mail (the operator tool in production without SVC_SMTP_URL). */
  readonly kind: 'smtp' | 'outbox' | 'none';
  send(mail: Mail): Promise<void>;
}

/** Counts every send by transport and outcome (svc_mail_sent_total), for the operator's mail-failure alert. */
function counted(mailer: Mailer): Mailer {
  const sent = counter('svc_mail_sent_total', 'Mails handed to the transport, by transport and outcome', [
    'transport',
    'outcome',
  ]);
  for (const outcome of ['sent', 'failed']) sent.inc({ transport: mailer.kind, outcome }, 0);
  return {
    kind: mailer.kind,
    async send(mail) {
      try {
        await mailer.send(mail);
        sent.inc({ transport: mailer.kind, outcome: 'sent' });
      } catch (e) {
        sent.inc({ transport: mailer.kind, outcome: 'failed' });
        throw e;
      }
    },
  };
}

export function createMailer(opts: {
  production: boolean;
  smtpUrl: string | undefined;
  from: string;
  db: Db;
  clock: Clock;
}): Mailer {
  return counted(createTransportMailer(opts));
}

function createTransportMailer(opts: {
  production: boolean;
  smtpUrl: string | undefined;
  from: string;
  db: Db;
  clock: Clock;
}): Mailer {
  if (opts.smtpUrl) {
    const transport = nodemailer.createTransport(opts.smtpUrl);
    return {
      kind: 'smtp',
      async send(mail) {
        await transport.sendMail({ from: opts.from, to: mail.to, subject: mail.subject, text: mail.text });
      },
    };
  }
  // The outbox prints codes on stderr: acceptable on a developer's machine, never in production.
  if (opts.production) throw new Error('production needs SVC_SMTP_URL: the dev outbox would log secrets');
  return {
    kind: 'outbox',
    async send(mail) {
      await opts.db
        .insertInto('outbox')
        .values({
          id: newId('mail'),
          to_addr: mail.to,
          subject: mail.subject,
          body_text: mail.text,
          created_at: opts.clock.now(),
        })
        .execute();
      // The dev outbox is the local user's inbox: printing it is the point (never enabled with SMTP).
      process.stderr.write(`\n[dev outbox] To: ${mail.to}\nSubject: ${mail.subject}\n\n${mail.text}\n\n`);
    },
  };
}
