import { execFile } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Stack, runSvc, startStack, tempHome } from '../../helpers/cli.js';
import { ROOT } from '../../helpers/processes.js';

const exec = promisify(execFile);

/** The newcomer's path of docs/cli.md, typed as a person would, against the real stack. */
describe('svc, a newcomer', () => {
  let stack: Stack;
  const { home, cleanup } = tempHome();
  const svc = (...args: string[]) => runSvc(args, { home, stack });

  beforeAll(async () => {
    stack = await startStack();
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
    cleanup();
  });

  it('registers, stores the key with mode 0600, searches, inspects, calls a free API and sees it in usage', async () => {
    const reg = await svc('register', '--json');
    expect(reg.code).toBe(0);
    const data = reg.json().data;
    expect(data.api_key).toMatch(/^svc_live_[A-Za-z0-9]{24}$/);
    const file = join(home, '.svc', 'config.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8')).apiKey).toBe(data.api_key);

    const search = await svc('search', 'weather', '--json');
    expect(search.json().data.data.map((l: { slug: string }) => l.slug)).toContain('demo-weather');
    const inspect = await svc('inspect', 'demo-weather', '--endpoints');
    expect(inspect.code).toBe(0);
    expect(inspect.stdout).toMatch(/\/forecast\s+\$0\.02/);

    const call = await svc('call', 'demo-weather', 'current', '--query', 'city=lisbon');
    expect(call.code).toBe(0);
    expect(JSON.parse(call.stdout).city).toBe('lisbon');
    expect(call.stderr).toMatch(/charged \$0\.00 · balance \$0\.00/);

    const usage = await svc('usage', '--json');
    expect(usage.json().data.totals.calls).toBe(1);
  });

  it('refuses a typo before any request: exit 2, usage error JSON, nothing called', async () => {
    const typo = await svc('call', 'demo-weather', 'current', '--qurey', 'city=x', '--json');
    expect(typo.code).toBe(2);
    expect(typo.json()).toEqual({
      ok: false,
      error: { code: 'usage_error', status: null, message: expect.stringContaining('--qurey'), next: null },
    });
    const missing = await svc('call', 'demo-weather', '--json');
    expect(missing.code).toBe(2);
    expect(missing.json().error.message).toContain('<endpoint>');
    const unknown = await svc('fly', '--json');
    expect(unknown.code).toBe(2);
    expect((await svc('usage', '--json')).json().data.totals.calls).toBe(1);
  });

  it('reports an API failure with exit 1, the server code and the next command', async () => {
    const paid = await svc('--json', 'call', 'demo-weather', 'forecast', '-q', 'city=porto');
    expect(paid.code).toBe(1);
    expect(paid.json()).toMatchObject({
      ok: false,
      // A registered org has no verified email, so it cannot buy credits yet: verifying comes first.
      error: {
        code: 'insufficient_credits',
        status: 402,
        next: 'svc verify --email <your email>',
      },
    });
    const human = await svc('call', 'demo-weather', 'forecast', '-q', 'city=porto');
    expect(human.code).toBe(1);
    expect(human.stderr).toContain('next: svc verify --email <your email>\n');
    const terms = await svc('terms', 'accept', 'demo-weather', '--yes', '--json');
    expect(terms.code).toBe(1);
    // A registered key's org has no email to sign in with yet: verifying one comes first (a login would make a new org).
    expect(terms.json().error).toMatchObject({ code: 'session_required', next: 'svc verify --email <your email>' });
    const gone = await runSvc(['balance', '--json'], { home, env: { SVC_API_URL: 'http://127.0.0.1:9' } });
    expect(gone.code).toBe(1);
    expect(gone.json().error.code).toBe('connection_failed');
  });

  it('quotes for free, respects --max-price, and charges a retried --idempotency-key call once', async () => {
    const me = (await svc('whoami', '--json')).json().data;
    await exec(
      process.execPath,
      [join(ROOT, 'dist/control/admin/main.js'), 'credits', 'grant', me.org.id, '10', '--reason', 'cli e2e'],
      {
        env: stack.env,
      },
    );
    const quote = await svc('call', 'demo-weather', 'forecast', '-q', 'city=porto', '--quote', '--json');
    expect(quote.json().data).toMatchObject({ price_cents: 2, would_pass: true });
    const tooDear = await svc('call', 'demo-weather', 'forecast', '-q', 'city=porto', '--max-price', '1', '--json');
    expect(tooDear.code).toBe(1);
    expect(tooDear.json().error.code).toBe('price_above_max');

    const first = await svc(
      'call',
      'demo-weather',
      'forecast',
      '-q',
      'city=porto',
      '--idempotency-key',
      'k1',
      '--json',
    );
    expect(first.code).toBe(0);
    expect(first.json().data).toMatchObject({
      status: 200,
      charged_cents: 2,
      balance_cents: 8,
      idempotent_replay: false,
    });
    const again = await svc(
      'call',
      'demo-weather',
      'forecast',
      '-q',
      'city=porto',
      '--idempotency-key',
      'k1',
      '--json',
    );
    expect(again.json().data).toMatchObject({ status: 200, charged_cents: 0, idempotent_replay: true });
    expect(again.json().data.body).toEqual(first.json().data.body);
    expect((await svc('balance', '--json')).json().data.credit_cents).toBe(8);
  });

  it('lets SVC_API_KEY and SVC_API_URL override the stored config', async () => {
    const other = (await runSvc(['register', '--json'], { home: tempHome().home, stack })).json().data;
    const who = await svc('whoami', '--json');
    const overridden = await runSvc(['whoami', '--json'], { home, stack, env: { SVC_API_KEY: other.api_key } });
    expect(overridden.json().data.org.id).toBe(other.org_id);
    expect(overridden.json().data.org.id).not.toBe(who.json().data.org.id);
  });

  it('logout --all forgets the key; login --key - stores a pasted key read from stdin after checking it', async () => {
    const file = join(home, '.svc', 'config.json');
    const key = JSON.parse(readFileSync(file, 'utf8')).apiKey as string;
    const out = await svc('logout', '--all', '--json');
    expect(out.json().data).toEqual({
      session_ended: false,
      key_cleared: true,
      previous_key_cleared: false,
      key_revoked: null,
    });
    expect(JSON.parse(readFileSync(file, 'utf8')).apiKey).toBeUndefined();
    const typo = await runSvc(['login', '--key', '-', '--json'], { home, stack, input: `${key.slice(0, -1)}\n` });
    expect(typo.code).toBe(2);
    const bad = await runSvc(['login', '--key', '-', '--json'], { home, stack, input: `svc_live_${'x'.repeat(24)}\n` });
    expect(bad.code).toBe(1);
    expect(bad.json().error.code).toBe('unauthorized');
    expect(JSON.parse(readFileSync(file, 'utf8')).apiKey).toBeUndefined();
    const ok = await runSvc(['login', '--key', '-', '--json'], { home, stack, input: `${key}\n` });
    expect(ok.code).toBe(0);
    expect(JSON.parse(readFileSync(file, 'utf8')).apiKey).toBe(key);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('prints help with an example and the version', async () => {
    const help = await svc('call', '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('EXAMPLES');
    expect(help.stdout).toContain('svc call demo-weather current');
    const version = await svc('--version');
    expect(version.stdout.trim()).toBe(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version);
  });
});
