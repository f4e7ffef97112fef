/**
 * `svc billing checkout [--pack|--amount]`: starts a checkout and opens its page. On a terminal (or with --wait)
 * it then polls the payment until it settles, so the command ends with the new balance.
 */
import { centsFlag } from '../../args.js';
import { api } from '../../client.js';
import { str, svcCommand } from '../../command.js';
import { CliFailure, usageError } from '../../failure.js';
import { dollars, interactive } from '../../output.js';
import { openInBrowser } from '../../open-url.js';
import { withSpinner } from '../../spinner.js';

interface Checkout {
  payment_id: string;
  checkout_url: string;
  amount_cents: number;
  credit_cents: number;
}
interface Payment {
  id?: string;
  payment_id?: string;
  status: 'open' | 'succeeded' | 'failed' | 'expired';
}

const POLL_MS = 1000;
const WAIT_MAX_MS = 15 * 60_000;

export default svcCommand({
  meta: { name: 'checkout', description: 'Buy credits: a pack or a custom amount (cents)' },
  args: {
    pack: { type: 'string', description: 'Pack id (svc billing packs)' },
    amount: { type: 'string', description: 'Custom amount in cents' },
    wait: { type: 'boolean', description: 'Wait for the payment to settle (default on a terminal)' },
  },
  examples: ['svc billing checkout --pack starter', 'svc billing checkout --amount 1500 --json'],
  async run({ args }) {
    const pack = str(args, 'pack');
    const amount = centsFlag('amount', str(args, 'amount'));
    if (Boolean(pack) === (typeof amount === 'number')) throw usageError('pass exactly one of --pack, --amount');
    const c = await api<Checkout>('POST', '/v1/billing/checkout', {
      body: pack ? { pack } : { amount_cents: amount },
    });
    await openInBrowser(c.checkout_url);
    if (!args.wait && !interactive())
      return {
        data: c,
        human: `Pay ${dollars(c.amount_cents)} at the page above for ${dollars(c.credit_cents)} in credits.`,
      };
    const status = await withSpinner('Waiting for the payment', () => waitForPayment(c.payment_id));
    if (status !== 'succeeded')
      throw new CliFailure(
        'api',
        `payment_${status}`,
        `The payment ${status}`,
        null,
        'svc billing checkout --pack starter',
      );
    const b = await api<{ credit_cents: number }>('GET', '/v1/billing/balance');
    return {
      data: { ...c, status, credit_cents_after: b.credit_cents },
      human: `Paid. Balance ${dollars(b.credit_cents)}.`,
    };
  },
});

async function waitForPayment(id: string): Promise<Payment['status']> {
  const until = Date.now() + WAIT_MAX_MS;
  while (Date.now() < until) {
    const r = await api<{ data: Payment[] }>('GET', '/v1/billing/payments');
    const p = r.data.find((x) => (x.payment_id ?? x.id) === id);
    if (p && p.status !== 'open') return p.status;
    await new Promise((res) => setTimeout(res, POLL_MS));
  }
  return 'expired';
}
