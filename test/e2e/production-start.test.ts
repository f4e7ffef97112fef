import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ROOT, tempDataDir } from '../helpers/processes.js';
import { call } from '../helpers/http.js';
import { loginCodeOf, startSmtpSink } from '../helpers/smtp-sink.js';

/** The `env` code block of docs/operations.md, as name → value. */
function documentedSettings(): Record<string, string> {
  const doc = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
  const block = /```env\n([\s\S]*?)```/.exec(doc)?.[1];
  if (!block) throw new Error('docs/operations.md has no ```env block');
  const settings: Record<string, string> = {};
  for (const line of block.split('\n')) {
    if (!line.trim() || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    settings[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return settings;
}

describe('production mode from docs/operations.md', () => {
  it('starts with exactly the documented settings: no demo, mail over SMTP, no code in the logs', async () => {
    const data = tempDataDir();
    const smtp = await startSmtpSink();
    // Only the placeholders are replaced, each by a local stand-in; an unknown placeholder fails the test.
    const standIns: Record<string, string> = {
      '<data dir>': data.dir,
      '<64 hex characters>': randomBytes(32).toString('hex'),
      '<smtps://user:password@smtp.example.com:465>': smtp.url,
      '<turnstile secret>': 'turnstile-test-secret',
      '<sk_live_…>': 'sk_test_local_stand_in',
      '<whsec_…>': 'whsec_local_stand_in',
    };
    const documented = documentedSettings();
    expect(documented.SVC_ENV).toBe('production');
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' };
    for (const [name, value] of Object.entries(documented)) {
      if (/^<.*>$/.test(value) && standIns[value] === undefined) throw new Error(`unknown placeholder ${value}`);
      env[name] = standIns[value] ?? value;
    }
    // Ephemeral ports so parallel test runs do not collide; the documented defaults are 4000-4002.
    Object.assign(env, { SVC_CONTROL_PORT: '0', SVC_GATEWAY_PORT: '0', SVC_MCP_PORT: '0' });

    const child = spawn(process.execPath, [join(ROOT, 'dist/scripts/start.js')], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    let out = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    try {
      const urls = await new Promise<Record<string, string>>((resolve, reject) => {
        const found: Record<string, string> = {};
        const timer = setTimeout(() => reject(new Error(`production start not ready:\n${err}`)), 40_000);
        child.once('exit', (code) => reject(new Error(`supervisor exited ${code}:\n${err}`)));
        createInterface({ input: child.stdout }).on('line', (line) => {
          out += line + '\n';
          const m = /^\s+(control plane|gateway|MCP)\s+(http:\/\/[0-9.:]+)/.exec(line);
          if (m) found[m[1]!] = m[2]!;
          if (line.startsWith('Ctrl-C')) {
            clearTimeout(timer);
            resolve(found);
          }
        });
      });
      const control = urls['control plane']!;
      expect(out).toContain('svc is running (production');
      expect(out).not.toContain('demo-weather');
      expect(out).not.toContain('First call');
      for (const url of Object.values(urls)) expect((await call(url, 'GET', '/healthz')).status).toBe(200);

      const search = await call(control, 'GET', '/v1/catalog/search?query=weather');
      expect(search.status).toBe(200);
      expect(search.body.data).toEqual([]);

      const reg = (await call(control, 'POST', '/v1/register')).body;
      const balance = await call(control, 'GET', '/v1/billing/balance', { token: reg.api_key });
      expect(balance.body.payments_mode).toBe('stripe');

      const login = await call(control, 'POST', '/v1/auth/login/request', { body: { email: 'ops@example.test' } });
      expect(login.status).toBe(202);
      const code = loginCodeOf(await smtp.waitFor('ops@example.test'));
      expect(err).not.toContain(code);
      expect(err).not.toContain(reg.api_key);
      expect(err).not.toContain('[dev outbox]');
    } finally {
      if (child.exitCode === null) {
        await new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        });
      }
      await smtp.close();
      data.cleanup();
    }
  }, 90_000);

  it('refuses to start the control plane in production without SMTP, naming the setting', async () => {
    const data = tempDataDir();
    const child = spawn(process.execPath, [join(ROOT, 'dist/control/main.js')], {
      env: { PATH: process.env.PATH ?? '', SVC_ENV: 'production', SVC_DATA_DIR: data.dir, SVC_CONTROL_PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    data.cleanup();
    expect(code).toBe(1);
    expect(err).toContain('SVC_SMTP_URL');
  });
});
