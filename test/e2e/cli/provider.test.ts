import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Stack, runSvc, startStack, tempHome } from '../../helpers/cli.js';
import { type SmtpSink, loginCodeOf, startSmtpSink } from '../../helpers/smtp-sink.js';
import { csrfOf, WebClient } from '../../helpers/web-client.js';

/** Every byte value, so a relay that decodes or re-encodes anything shows up. */
const BYTES = Buffer.from(Array.from({ length: 512 }, (_, i) => i % 256));

function upstream(): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    if (req.url === '/openapi.json') {
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          openapi: '3.0.3',
          info: { title: 'Byte Shop', version: '1.0.0', description: 'Test upstream' },
          servers: [{ url: base }],
          paths: {
            '/hello': { get: { summary: 'Hello', responses: { 200: { description: 'ok' } } } },
            '/bytes': { get: { summary: 'Binary', responses: { 200: { description: 'bytes' } } } },
          },
        }),
      );
    } else if (req.url?.startsWith('/bytes')) {
      res.setHeader('content-type', 'application/octet-stream');
      res.end(BYTES);
    } else {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ hello: 'world' }));
    }
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }),
    ),
  );
}

/** The provider's path of docs/cli.md: log in, import, credentials, pricing, publish, documents, unpublish. */
describe('svc, a provider', () => {
  let stack: Stack;
  let smtp: SmtpSink;
  let up: { server: Server; url: string };
  const provider = tempHome();
  const consumer = tempHome();
  const svc = (...args: string[]) => runSvc(args, { home: provider.home, stack });
  const buyer = (...args: string[]) => runSvc(args, { home: consumer.home, stack });

  beforeAll(async () => {
    smtp = await startSmtpSink();
    up = await upstream();
    stack = await startStack({ SVC_SMTP_URL: smtp.url });
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
    await smtp?.close();
    up?.server.close();
    provider.cleanup();
    consumer.cleanup();
  });

  it('logs in by mailed code, publishes an imported API, and a consumer gets its binary answer byte for byte', async () => {
    const asked = await svc('login', '--email', 'prov@example.com', '--json');
    expect(asked.code).toBe(0);
    expect(asked.json().data.status).toBe('code_sent');
    const code = loginCodeOf(await smtp.waitFor('prov@example.com'));
    const login = await svc('login', '--email', 'prov@example.com', '--code', code, '--json');
    expect(login.code).toBe(0);
    expect(login.json().data.session_token).toBeUndefined();

    const created = await svc('provider', 'create', `${up.url}/openapi.json`, '--category', 'tools', '--json');
    expect(created.code).toBe(0);
    const api = created.json().data;
    expect(api.api_id).toMatch(/^api_/);
    expect((await svc('provider', 'credentials', api.api_id, '--secret', 'upstream-secret', '--json')).code).toBe(0);
    const detail = (await svc('provider', 'get', api.api_id, '--json')).json().data;
    const bytesEp = detail.endpoints.find((e: { path: string }) => e.path === '/bytes');
    const priced = await svc(
      'provider',
      'pricing',
      api.api_id,
      '--endpoint-id',
      bytesEp.endpoint_id,
      '--price-cents',
      '0',
      '--json',
    );
    expect(priced.code).toBe(0);
    // The human views show the endpoints themselves (issue 24: they said "N items" or printed JSON).
    const view = await svc('provider', 'get', api.api_id);
    expect(view.stdout).toMatch(/GET\s+\/bytes\s+\$0\.00/);
    expect(view.stdout).not.toMatch(/\d+ items/);

    const noTerms = await svc('provider', 'publish', api.api_id, '--json');
    expect(noTerms.code).toBe(2);
    const live = await svc('provider', 'publish', api.api_id, '--accept-terms', '--json');
    expect(live.code).toBe(0);
    expect((await svc('provider', 'list', '--json')).json().data.data[0].status).toBe('live');

    await buyer('register');
    const bytes = await buyer('call', api.slug, 'bytes');
    expect(bytes.code).toBe(0);
    expect(bytes.stdoutBytes.equals(BYTES)).toBe(true);
    const asJson = await buyer('call', api.slug, 'bytes', '--json');
    expect(Buffer.from(asJson.json().data.body_base64, 'base64').equals(BYTES)).toBe(true);

    // Terms: a document, activated, blocks the consumer until an admin accepts it with a session.
    const md = join(provider.home, 'terms.md');
    writeFileSync(md, '# Byte Shop terms\n\nBe nice.\n');
    const doc = await svc(
      'provider',
      'documents',
      'create',
      '--api-id',
      api.api_id,
      '--version',
      '1.0.0',
      '--markdown',
      md,
      '--json',
    );
    expect(doc.code).toBe(0);
    const docId = doc.json().data.document_id;
    expect((await svc('provider', 'documents', 'activate', docId, '--json')).code).toBe(0);
    const shown = await buyer('terms', 'show', api.slug);
    expect(shown.stdout).toContain('version 1.0.0');
    expect(shown.stdout).toContain('Be nice.');
    expect(shown.stdout).not.toContain('{');
    expect((await svc('provider', 'documents', 'list', '--json')).json().data.data[0].document_id).toBe(docId);
    const blocked = await buyer('call', api.slug, 'hello', '--json');
    expect(blocked.code).toBe(1);
    expect(blocked.json().error).toMatchObject({
      code: 'terms_not_accepted',
      status: 428,
      next: `svc terms accept ${api.slug}`,
    });
    const noYes = await svc('terms', 'accept', api.slug);
    expect(noYes.code).toBe(2);
    const accepted = await svc('terms', 'accept', api.slug, '--yes', '--json');
    expect(accepted.code).toBe(0);
    expect(accepted.json().data).toMatchObject({ accepted: true, document_id: docId });
    expect((await svc('terms', 'status', api.slug, '--json')).json().data.accepted).toBe(true);

    const down = await svc('provider', 'unpublish', api.api_id, '--json');
    expect(down.code).toBe(0);
    const gone = await buyer('call', api.slug, 'hello', '--json');
    expect(gone.json().error.code).toBe('listing_not_found');
  });

  it('manages keys and budgets, buys credits in test-payments mode, and logs out on the server', async () => {
    const created = await svc('keys', 'create', '--name', 'agent-1', '--budget', '300', '--daily-cap', '100', '--json');
    expect(created.code).toBe(0);
    const key = created.json().data;
    expect(key.key.budget_cents).toBe(300);
    const patched = await svc('budget', 'set', '--key', key.key.id, '--per-call-max', '5', '--json');
    expect(patched.code).toBe(0);
    const listed = (await svc('keys', 'list', '--json')).json().data.data;
    expect(listed.find((k: { id: string }) => k.id === key.key.id).per_call_max_cents).toBe(5);
    expect((await svc('keys', 'patch', key.key.id, '--budget', 'lots')).code).toBe(2);
    expect((await svc('keys', 'revoke', key.key.id, '--json')).code).toBe(0);

    const before = (await svc('balance', '--json')).json().data.credit_cents;
    const checkout = await svc('billing', 'checkout', '--pack', 'starter', '--json');
    expect(checkout.code).toBe(0);
    const url = checkout.json().data.checkout_url as string;
    // Complete the test page as a person would: open it, fill the card form, submit.
    const web = new WebClient(new URL(url).origin);
    const page = (await web.get(new URL(url).pathname)).html;
    expect(page).toContain('<form');
    const action = /<form[^>]*action="([^"]+)"/.exec(page)![1]!;
    const paid = await web.post(action, {
      card: '4242424242424242',
      exp: '12/34',
      cvc: '123',
      csrf_token: csrfOf(page),
    });
    expect(paid.status).toBe(200);
    expect((await svc('balance', '--json')).json().data.credit_cents).toBe(before + 500);

    const out = await svc('logout', '--json');
    expect(out.json().data).toEqual({
      session_ended: true,
      key_cleared: false,
      previous_key_cleared: false,
      key_revoked: null,
    });
    const after = await svc('whoami', '--json');
    expect(after.code).toBe(1);
    expect(after.json().error.code).toBe('unauthorized');
  });
});
