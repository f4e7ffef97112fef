/**
 * Form refusals come back to the same form (issue 24.4 / 22.2): the message beside the field, in human words (no
 * `amount_cents`, no cents), the person's input kept, and nothing changed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csrfOf } from '../../helpers/web-client.js';
import { startWebFixture, type WebFixture } from './web-fixture.js';

let f: WebFixture;
beforeAll(async () => {
  f = await startWebFixture();
});
afterAll(async () => {
  await f?.stop();
});

describe('billing forms', () => {
  it('a custom amount out of bounds is refused beside the field with the bounds in dollars and the input kept', async () => {
    const web = await f.signIn('billing-form@example.com');
    const page = await web.get('/dashboard/billing');
    const payments = await f.db.db.selectFrom('payments').select('id').execute();
    for (const amount of ['1', '5.555', '', '99999']) {
      const res = await web.post('/dashboard/billing/checkout', { amount, csrf_token: csrfOf(page.html) });
      expect(res.status).toBe(400);
      expect(res.html).toMatch(
        /class="field-error" id="buy-amount-error">(Enter an amount between \$\d+\.\d\d and \$\d+\.\d\d\.|Enter an amount in dollars, like [\d.]+( or 5.25)?\.)</,
      );
      expect(res.html).not.toMatch(/amount_cents|cents/);
      expect(res.html).toContain(`value="${amount}"`);
    }
    expect(await f.db.db.selectFrom('payments').select('id').execute()).toEqual(payments);
  });

  it('auto-reload refuses a bad amount beside its field and keeps the other inputs', async () => {
    const web = await f.signIn('reload-form@example.com');
    const page = await web.get('/dashboard/billing');
    const res = await web.post('/dashboard/billing/auto-reload', {
      enabled: 'on',
      threshold: '3.50',
      amount: '0.01',
      csrf_token: csrfOf(page.html),
    });
    expect(res.status).toBe(400);
    expect(res.html).toMatch(/id="reload-amount-error">Enter an amount between/);
    expect(res.html).toMatch(/name="threshold"[^>]*value="3.50"/);
    expect(res.html).toMatch(/name="enabled" value="on" checked/);
    const after = await web.get('/dashboard/billing');
    expect(after.html).toContain('Off.');
  });
});
