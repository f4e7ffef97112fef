/** A real SMTP server (smtp-server) on an ephemeral loopback port that keeps every received message. */
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';

export interface ReceivedMail {
  to: string[];
  subject: string;
  /** Body with quoted-printable soft breaks undone. */
  text: string;
  raw: string;
}

export interface SmtpSink {
  url: string;
  mails: ReceivedMail[];
  /** Waits for the next mail to `to` whose subject or text matches. */
  waitFor(to: string, match?: RegExp, timeoutMs?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

function parse(raw: string, to: string[]): ReceivedMail {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const body = raw.slice(split + 4);
  const subject = /^Subject: (.*)$/im.exec(head)?.[1] ?? '';
  const qp = /content-transfer-encoding:\s*quoted-printable/i.test(head);
  const text = qp
    ? body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
    : body;
  return { to, subject, text, raw };
}

export async function startSmtpSink(): Promise<SmtpSink> {
  const mails: ReceivedMail[] = [];
  const waiters: Array<() => void> = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        mails.push(
          parse(
            Buffer.concat(chunks).toString('utf8'),
            session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
          ),
        );
        for (const w of waiters.splice(0)) w();
        callback();
      });
    },
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.server.address() as AddressInfo).port;
  const find = (to: string, match: RegExp | undefined, seen: number) =>
    mails
      .slice(seen)
      .find((m) => m.to.includes(to.toLowerCase()) && (!match || match.test(m.subject) || match.test(m.text)));
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    async waitFor(to, match, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const m = find(to, match, 0);
        if (m) {
          mails.splice(mails.indexOf(m), 1);
          return m;
        }
        if (Date.now() > deadline) throw new Error(`no mail to ${to} matching ${match} within ${timeoutMs} ms`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 200);
        });
      }
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

export function loginCodeOf(mail: ReceivedMail): string {
  const m = /\b(\d{6})\b/.exec(mail.subject) ?? /\b(\d{6})\b/.exec(mail.text);
  if (!m) throw new Error(`no code in mail: ${mail.subject}`);
  return m[1]!;
}

export function verifyTokenOf(mail: ReceivedMail): string {
  const m = /\b(vt_[0-9A-Za-z]{40})\b/.exec(mail.text);
  if (!m) throw new Error('no verification token in mail');
  return m[1]!;
}
