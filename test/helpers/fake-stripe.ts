/**
 * A small local stand-in for the Stripe API (stripe-mock is not installable): answers the calls svc makes with
 * Stripe-shaped JSON, honours Idempotency-Key like Stripe, records every request, and sends webhooks signed
 * with the SDK's own test header helper. Point the control plane at it with SVC_STRIPE_API_BASE.
 */
import { afterAll, beforeAll } from 'vitest';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import Stripe from 'stripe';
import { startControl, type ControlHarness } from './harness.js';
import { openTestDb } from './db.js';
import type { DbHandles } from '../../core/db/database.js';

export interface RecordedRequest {
  method: string;
  path: string;
  /** Form body decoded into nested objects (`metadata[payment_id]` -> { metadata: { payment_id } }). */
  body: Record<string, unknown>;
  idempotencyKey: string | undefined;
}

export interface FakeAccount {
  id: string;
  details_submitted: boolean;
  payouts_enabled: boolean;
}

type Json = Record<string, unknown>;

const rid = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;

/** Decodes Stripe's form encoding (`a[b][0]=x`) into nested objects; array indices stay object keys. */
export function decodeForm(raw: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(raw)) {
    const parts = key.replace(/\]/g, '').split('[');
    let node: Record<string, unknown> = out;
    parts.forEach((p, i) => {
      if (i === parts.length - 1) node[p] = value;
      else {
        node[p] ??= {};
        node = node[p] as Record<string, unknown>;
      }
    });
  }
  return out;
}

export class FakeStripe {
  readonly requests: RecordedRequest[] = [];
  readonly accounts = new Map<string, FakeAccount>();
  /** Off-session charges to decline before succeeding again. */
  declineNextCharges = 0;
  failNextTransfers = 0;
  private readonly idem = new Map<string, { status: number; body: Json }>();
  private server: Server | undefined;
  url = '';

  constructor(readonly webhookSecret = 'whsec_test_' + randomBytes(12).toString('hex')) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }

  callsTo(method: string, path: string | RegExp): RecordedRequest[] {
    return this.requests.filter(
      (r) => r.method === method && (typeof path === 'string' ? r.path === path : path.test(r.path)),
    );
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const path = (req.url ?? '/').split('?')[0]!;
    const method = req.method ?? 'GET';
    const body = decodeForm(Buffer.concat(chunks).toString('utf8'));
    const idempotencyKey = (req.headers['idempotency-key'] as string | undefined) ?? undefined;
    this.requests.push({ method, path, body, idempotencyKey });
    const cacheKey = idempotencyKey ? `${method} ${path} ${idempotencyKey}` : undefined;
    let result = cacheKey ? this.idem.get(cacheKey) : undefined;
    if (!result) {
      result = this.route(method, path, body);
      if (cacheKey) this.idem.set(cacheKey, result);
    }
    res.writeHead(result.status, { 'content-type': 'application/json', 'request-id': rid('req') });
    res.end(JSON.stringify(result.body));
  }

  private route(method: string, path: string, b: Record<string, unknown>): { status: number; body: Json } {
    const ok = (body: Json) => ({ status: 200, body });
    const meta = (b.metadata ?? {}) as Json;
    if (method === 'POST' && path === '/v1/customers')
      return ok({ id: rid('cus'), object: 'customer', email: b.email ?? null, metadata: meta });
    if (method === 'POST' && path === '/v1/checkout/sessions') {
      const id = rid('cs_test');
      const item = ((b.line_items as Json | undefined)?.['0'] ?? {}) as Json;
      const amount = Number(((item.price_data ?? {}) as Json).unit_amount ?? 0);
      return ok({
        id,
        object: 'checkout.session',
        mode: b.mode,
        status: 'open',
        payment_status: 'unpaid',
        customer: b.customer,
        amount_total: amount,
        metadata: meta,
        client_reference_id: b.client_reference_id ?? null,
        url: `https://checkout.stripe.test/c/pay/${id}`,
      });
    }
    const pm = /^\/v1\/payment_methods\/([^/]+)$/.exec(path);
    if (method === 'GET' && pm)
      return ok({
        id: pm[1],
        object: 'payment_method',
        type: 'card',
        card: { brand: 'visa', last4: '4242', exp_month: 12, exp_year: 2034 },
      });
    if (method === 'POST' && path === '/v1/billing_portal/sessions')
      return ok({
        id: rid('bps'),
        object: 'billing_portal.session',
        customer: b.customer,
        url: `https://billing.stripe.test/p/session/${rid('ps')}`,
      });
    if (method === 'POST' && path === '/v1/payment_intents') {
      const pi = {
        id: rid('pi'),
        object: 'payment_intent',
        amount: Number(b.amount),
        currency: b.currency,
        customer: b.customer,
        payment_method: b.payment_method,
        metadata: meta,
      };
      if (this.declineNextCharges > 0) {
        this.declineNextCharges--;
        return {
          status: 402,
          body: {
            error: {
              type: 'card_error',
              code: 'card_declined',
              decline_code: 'generic_decline',
              message: 'Your card was declined.',
              payment_intent: { ...pi, status: 'requires_payment_method' },
            },
          },
        };
      }
      return ok({ ...pi, status: 'succeeded' });
    }
    if (method === 'POST' && path === '/v1/accounts') {
      const acct: FakeAccount = { id: rid('acct'), details_submitted: false, payouts_enabled: false };
      this.accounts.set(acct.id, acct);
      return ok({ object: 'account', controller: b.controller, metadata: meta, ...acct });
    }
    const acct = /^\/v1\/accounts\/([^/]+)$/.exec(path);
    if (method === 'GET' && acct) {
      const a = this.accounts.get(acct[1]!);
      return a
        ? ok({ object: 'account', ...a })
        : { status: 404, body: { error: { type: 'invalid_request_error', message: 'No such account' } } };
    }
    if (method === 'POST' && path === '/v1/account_links')
      return ok({
        object: 'account_link',
        url: `https://connect.stripe.test/setup/e/${String(b.account)}/${rid('al')}`,
      });
    if (method === 'POST' && path === '/v1/transfers') {
      if (this.failNextTransfers > 0) {
        this.failNextTransfers--;
        return {
          status: 400,
          body: {
            error: {
              type: 'invalid_request_error',
              code: 'insufficient_funds',
              message: 'Insufficient funds in the platform balance.',
            },
          },
        };
      }
      return ok({
        id: rid('tr'),
        object: 'transfer',
        amount: Number(b.amount),
        currency: b.currency,
        destination: b.destination,
        metadata: meta,
      });
    }
    return {
      status: 404,
      body: { error: { type: 'invalid_request_error', message: `fake-stripe: no route ${method} ${path}` } },
    };
  }

  /** A signed webhook delivery as Stripe would send it; `tamper` alters the body after signing. */
  signedEvent(
    type: string,
    object: Json,
    opts: { id?: string; tamper?: boolean; secret?: string } = {},
  ): { id: string; payload: string; signature: string } {
    const id = opts.id ?? rid('evt');
    const payload = JSON.stringify({
      id,
      object: 'event',
      api_version: '2026-10-28.endive',
      created: Math.floor(Date.now() / 1000),
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type,
      data: { object },
    });
    const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: opts.secret ?? this.webhookSecret });
    return {
      id,
      payload: opts.tamper
        ? payload.replace(/"amount_total":\d+/, '"amount_total":1').replace('"livemode":false', '"livemode":true')
        : payload,
      signature,
    };
  }

  async deliver(
    controlUrl: string,
    ev: { payload: string; signature: string },
  ): Promise<{ status: number; body: any }> {
    const res = await fetch(`${controlUrl}/v1/billing/webhooks/stripe`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': ev.signature },
      body: ev.payload,
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { status: res.status, body };
  }
}

export async function startFakeStripe(): Promise<FakeStripe> {
  return new FakeStripe().start();
}

/** Env for startControl that points the real stripe SDK at the fake. */
export function stripeEnv(fake: FakeStripe): Record<string, string> {
  return {
    SVC_STRIPE_SECRET_KEY: 'sk_test_fake_' + 'x'.repeat(16),
    SVC_STRIPE_API_BASE: fake.url,
    SVC_STRIPE_WEBHOOK_SECRET: fake.webhookSecret,
    SVC_STRIPE_MAX_NETWORK_RETRIES: '0',
  };
}

/** A fake Stripe, a control plane pointed at it and a DB handle, for a whole test file; `bind` receives them. */
export function useStripeControl(
  bind: (s: { fake: FakeStripe; h: ControlHarness; db: DbHandles }) => void,
  extraEnv: Record<string, string> = {},
): void {
  let fake: FakeStripe | undefined;
  let h: ControlHarness | undefined;
  let db: DbHandles | undefined;
  beforeAll(async () => {
    fake = await startFakeStripe();
    h = await startControl({ ...stripeEnv(fake), ...extraEnv });
    db = openTestDb(h.dataDir);
    bind({ fake, h, db });
  });
  afterAll(async () => {
    await db?.close();
    await h?.stop();
    await fake?.stop();
  });
}
