/**
 * `svc billing checkout [--pack|--amount]`: starts a checkout and opens its page. On a terminal (or with --wait)
 * it then polls the payment until it settles, so the command ends with the new balance.
 */
import type { z } from 'zod';
import { BalanceSchema, CheckoutResultSchema, PaymentSchema } from '../../../core/schemas/billing.schemas.js';
import { PageOf } from '../../../core/schemas/common.schemas.js';
import { valueFlag } from '../../args.js';
import { api } from '../../client.js';
import { svcCommand } from '../../command.js';
import { CliFailure, usageError } from '../../failure.js';
import { dollars, interactive } from '../../output.js';
import { openInBrowser } from '../../open-url.js';
import { withSpinner } from '../../spinner.js';

type PaymentStatus = z.infer<typeof PaymentSchema>['status'];

const POLL_MS = 1000;
const WAIT_MAX_MS = 15 * 60_000;

export default svcCommand({
  meta: { name: 'checkout', description: 'Buy credits: a pack or a custom amount (cents)' },
  args: {
    pack: { type: 'string', description: 'Pack id (svc billing packs)' },
    amount: valueFlag('cents', 'Custom amount in cents'),
    wait: { type: 'boolean', description: 'Wait for the payment to settle (default on a terminal)' },
  },
  examples: ['svc billing checkout --pack starter', 'svc billing checkout --amount 1500 --json'],
  async run({ args }) {
    const { pack, amount } = args;
    if ((pack === undefined) === (amount === undefined)) throw usageError('pass exactly one of --pack, --amount');
    const c = await api('POST', '/v1/billing/checkout', CheckoutResultSchema, {
      body: pack !== undefined ? { pack } : { amount_cents: Number(amount) },
    });
    await openInBrowser(
      c.checkout_url,
      `Pay ${dollars(c.amount_cents)} for ${dollars(c.credit_cents)} in credits on this page`,
    );
    if (!args.wait && !interactive()) return { data: c, human: '' };
    const status = await withSpinner('Waiting for the payment', () => waitForPayment(c.payment_id));
    if (status !== 'succeeded')
      throw new CliFailure(
        'api',
        `payment_${status}`,
        `The payment ${status}`,
        null,
        `svc billing checkout ${pack !== undefined ? `--pack ${pack}` : `--amount ${amount}`}`,
      );
    const b = await api('GET', '/v1/billing/balance', BalanceSchema);
    return {
      data: { ...c, status, credit_cents_after: b.credit_cents },
      human: `Paid. Balance ${dollars(b.credit_cents)}.`,
    };
  },
});

const PaymentsSchema = PageOf(PaymentSchema);

async function waitForPayment(id: string): Promise<PaymentStatus> {
  const until = Date.now() + WAIT_MAX_MS;
  while (Date.now() < until) {
    const r = await api('GET', '/v1/billing/payments', PaymentsSchema);
    const p = r.data.find((x) => x.id === id);
    if (p && p.status !== 'open') return p.status;
    await new Promise((res) => setTimeout(res, POLL_MS));
  }
  return 'expired';
}
