/**
 * `svc register` then `svc connect --client <name>`, and the real client, installed from npm at a pinned version
 * (test/clients/package.json, its own node_modules; `.ci/run` installs it), judges the result in a fresh HOME
 * against the running stack (`npm start`'s supervisor, demo listing). No model account is involved: the MCP
 * commands need none, Codex is pointed at a closed local model port, and Claude Code's one end-to-end run talks
 * to a stand-in model server in this file. A recording pass-through in front of the MCP server shows what each
 * client sent and what svc answered.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO, SVC_BIN, type Stack, runSvc, startStack, tempHome } from '../../helpers/cli.js';
import { openTerminal } from '../../helpers/terminal.js';
import { type SmtpSink, loginCodeOf, startSmtpSink } from '../../helpers/smtp-sink.js';
import {
  BIN,
  CLIENTS_DIR,
  type McpRecorder,
  clientsInstalled,
  freePort,
  recordMcp,
  runClient,
  standInModel,
} from './harness.js';

const exec = promisify(execFile);

let stack: Stack;
let smtp: SmtpSink;
let mcp: McpRecorder;
const cleanups: (() => void)[] = [];

beforeAll(async () => {
  if (!clientsInstalled())
    throw new Error(`the pinned clients are not installed: run \`npm ci --prefix ${CLIENTS_DIR}\` (as .ci/run does)`);
  // The MCP server reaches the gateway at the URL its configuration names: give the gateway a known port.
  smtp = await startSmtpSink();
  stack = await startStack({ SVC_GATEWAY_PORT: String(await freePort()), SVC_SMTP_URL: smtp.url });
  mcp = await recordMcp(`${stack.mcp}/mcp`);
}, 60_000);

afterAll(async () => {
  await mcp?.close();
  await stack?.stop();
  await smtp?.close();
  for (const c of cleanups) c();
});

/** A fresh person: their own HOME and work folder, registered (0 credits), with svc pointed at the recorder. */
async function person(): Promise<{ home: string; work: string; orgId: string; env: Record<string, string> }> {
  const t = tempHome();
  cleanups.push(t.cleanup);
  const work = join(t.home, 'work');
  mkdirSync(work);
  const env = { SVC_MCP_URL: mcp.url };
  const reg = await runSvc(['register', '--json'], { home: t.home, stack, env });
  expect(reg.code, reg.stderr).toBe(0);
  return { home: t.home, work, orgId: reg.json().data.org_id, env };
}

async function connect(p: { home: string; work: string; env: Record<string, string> }, ...args: string[]) {
  const r = await runSvc(['connect', ...args], { home: p.home, cwd: p.work, stack, env: p.env });
  expect(r.code, r.stderr).toBe(0);
  return r;
}

const quiet = {
  DISABLE_AUTOUPDATER: '1',
  DISABLE_TELEMETRY: '1',
  DISABLE_ERROR_REPORTING: '1',
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
};

describe('real MCP clients after svc register + svc connect', () => {
  it('svc register on a terminal says how to see the key (svc token) and how to connect an agent', async () => {
    const t = tempHome();
    cleanups.push(t.cleanup);
    const term = await openTerminal(
      `env HOME=${t.home} NO_COLOR=1 SVC_API_URL=${stack.control} ${process.execPath} ${SVC_BIN} register; echo "exit=$?"; sleep 30`,
    );
    try {
      const screen = await term.waitFor(/exit=\d+/);
      expect(screen).toContain('exit=0');
      expect(screen).toContain('See it with: svc token');
      expect(screen).toContain('svc connect --client claude-code');
    } finally {
      await term.close();
    }
    const token = await runSvc(['token'], { home: t.home });
    expect(token.stdout).toMatch(/^svc_live_[0-9A-Za-z]{24}\n$/);
  }, 60_000);

  it('Claude Code: `claude mcp list` reports svc connected, with the stored key in the entry', async () => {
    const p = await person();
    await connect(p, '--client', 'claude-code');
    const before = mcp.calls.length;
    const r = await runClient(BIN.claude, ['mcp', 'list'], {
      env: { HOME: p.home, ...quiet },
      cwd: p.work,
      timeoutMs: 90_000,
    });
    expect(r.stdout).toMatch(/svc: http:\/\/127\.0\.0\.1:\d+\/mcp \(HTTP\) - ✔ Connected/);
    const seen = mcp.calls.slice(before);
    expect(seen.find((c) => c.method === 'initialize')).toMatchObject({ status: 200, authorized: true });
  }, 120_000);

  it('after svc login (a session, no key stored) svc connect makes a key for the org and Claude Code connects with it', async () => {
    const t = tempHome();
    cleanups.push(t.cleanup);
    const work = join(t.home, 'work');
    mkdirSync(work);
    const p = { home: t.home, work, env: { SVC_MCP_URL: mcp.url } };
    const email = 'connect-after-login@example.com';
    expect((await runSvc(['login', '--email', email], { home: p.home, stack })).code).toBe(0);
    const code = loginCodeOf(await smtp.waitFor(email));
    const login = await runSvc(['login', '--email', email, '--code', code, '--json'], { home: p.home, stack });
    expect(login.code, login.stderr).toBe(0);
    const connected = await runSvc(['connect', '--client', 'claude-code', '--json'], {
      home: p.home,
      cwd: p.work,
      stack,
      env: p.env,
    });
    expect(connected.json().data.key_source).toBe('created');
    const r = await runClient(BIN.claude, ['mcp', 'list'], {
      env: { HOME: p.home, ...quiet },
      cwd: p.work,
      timeoutMs: 90_000,
    });
    expect(r.stdout).toMatch(/svc: http:\/\/127\.0\.0\.1:\d+\/mcp \(HTTP\) - ✔ Connected/);
  }, 120_000);

  it('Claude Code with CLAUDE_CONFIG_DIR: svc connect writes where Claude Code reads, and it connects', async () => {
    const p = await person();
    const dir = join(p.home, 'claude-config');
    await connect({ ...p, env: { ...p.env, CLAUDE_CONFIG_DIR: dir } }, '--client', 'claude-code');
    const r = await runClient(BIN.claude, ['mcp', 'list'], {
      env: { HOME: p.home, CLAUDE_CONFIG_DIR: dir, ...quiet },
      cwd: p.work,
      timeoutMs: 90_000,
    });
    expect(r.stdout).toMatch(/svc: http:\/\/127\.0\.0\.1:\d+\/mcp \(HTTP\) - ✔ Connected/);
  }, 120_000);

  it('Claude Code project server (.mcp.json): held for approval, as svc connect says; --trust approves it in a folder the person trusts', async () => {
    const p = await person();
    const said = await connect(p, '--project', '--client', 'claude-code');
    expect(said.stdout).toContain('Pending approval');
    // What Claude Code records when the person accepts its folder-trust dialog at the first start in this folder:
    // project and local settings (where the approval lives) count only in a trusted folder.
    const state = join(p.home, '.claude.json');
    writeFileSync(state, JSON.stringify({ projects: { [p.work]: { hasTrustDialogAccepted: true } } }));
    const list = () =>
      runClient(BIN.claude, ['mcp', 'list'], { env: { HOME: p.home, ...quiet }, cwd: p.work, timeoutMs: 90_000 });
    const held = await list();
    expect(held.stdout).toMatch(/svc: .* - ⏸ Pending approval/);
    await connect(p, '--project', '--client', 'claude-code', '--trust');
    const r = await list();
    expect(r.stdout).toMatch(/svc: http:\/\/127\.0\.0\.1:\d+\/mcp \(HTTP\) - ✔ Connected/);
  }, 180_000);

  it('Gemini CLI: svc is held back in an untrusted folder, as svc connect says; with --trust `gemini mcp list` reports it connected', async () => {
    const p = await person();
    const said = await connect(p, '--client', 'gemini');
    expect(said.stdout).toContain('Gemini CLI connects MCP servers only in folders you trust');
    const gated = await runClient(BIN.gemini, ['mcp', 'list'], {
      env: { HOME: p.home },
      cwd: p.work,
      timeoutMs: 90_000,
    });
    expect(gated.stdout + gated.stderr).toMatch(/svc: .* - Disabled/);

    await connect(p, '--client', 'gemini', '--trust');
    const before = mcp.calls.length;
    const r = await runClient(BIN.gemini, ['mcp', 'list'], { env: { HOME: p.home }, cwd: p.work, timeoutMs: 90_000 });
    expect(r.stdout + r.stderr).toMatch(/✓ svc: http:\/\/127\.0\.0\.1:\d+\/mcp \(http\) - Connected/);
    expect(mcp.calls.slice(before).find((c) => c.method === 'initialize')).toMatchObject({
      status: 200,
      authorized: true,
    });
  }, 240_000);

  it('Codex: `codex exec`, its model port closed, reaches tools/list on svc with the stored key', async () => {
    const p = await person();
    await connect(p, '--client', 'codex');
    const before = mcp.calls.length;
    const run = runClient(
      BIN.codex,
      [
        'exec',
        '--skip-git-repo-check',
        '-c',
        'model_provider=closed',
        '-c',
        'model_providers.closed={name="closed",base_url="http://127.0.0.1:9/v1",wire_api="responses",env_key="CLOSED_MODEL_KEY",request_max_retries=0,stream_max_retries=0}',
        'list the svc tools',
      ],
      { env: { HOME: p.home, CLOSED_MODEL_KEY: 'unused' }, cwd: p.work, timeoutMs: 90_000 },
    );
    try {
      const listed = await mcp.waitFor('tools/list', 80_000, before);
      expect(listed).toMatchObject({ status: 200, authorized: true });
    } finally {
      run.stop();
      await run;
    }
    const seen = mcp.calls.slice(before).map((c) => c.method);
    expect(seen).toContain('initialize');
  }, 120_000);

  it('Claude Code in print mode, its model a stand-in that asks for call_api on the demo API: the call is made through svc and metered', async () => {
    const p = await person();
    await exec(
      process.execPath,
      [join(REPO, 'dist/control/admin/main.js'), 'credits', 'grant', p.orgId, '10', '--reason', 'real-client e2e'],
      { env: stack.env },
    );
    await connect(p, '--client', 'claude-code');
    const model = await standInModel('mcp__svc__call_api', {
      slug: 'demo-weather',
      endpoint: '/forecast',
      input: { city: 'lisbon' },
    });
    try {
      const r = await runClient(
        BIN.claude,
        ['-p', 'What is the weather forecast for Lisbon?', '--allowedTools', 'mcp__svc__call_api', '--max-turns', '3'],
        {
          env: {
            HOME: p.home,
            ANTHROPIC_BASE_URL: model.url,
            ANTHROPIC_API_KEY: 'sk-ant-stand-in',
            ...quiet,
          },
          cwd: p.work,
          timeoutMs: 120_000,
        },
      );
      expect(r.stdout, r.stderr).toContain('The call went through svc.');
      // The model saw svc's tools, asked for call_api, and got the upstream's answer back.
      expect(model.requests.some((q) => q.tools.includes('mcp__svc__call_api'))).toBe(true);
      expect(model.toolResults.join('')).toContain('lisbon');
      expect(mcp.calls.some((c) => c.method === 'tools/call' && c.status === 200)).toBe(true);
    } finally {
      await model.close();
    }
    // Metered: the forecast costs 2 cents, taken from the 10 granted, with one usage record.
    const balance = await runSvc(['balance', '--json'], { home: p.home, stack });
    expect(balance.json().data.credit_cents).toBe(8);
    const usage = await runSvc(['usage', '--json'], { home: p.home, stack });
    expect(JSON.stringify(usage.json().data)).toContain('demo-weather');
  }, 180_000);
});

describe('a real client against a production server, with no key stored', () => {
  let prod: Stack;
  let smtpProd: SmtpSink;
  beforeAll(async () => {
    if (!clientsInstalled()) throw new Error(`the pinned clients are not installed under ${CLIENTS_DIR}`);
    smtpProd = await startSmtpSink();
    const [control, gateway, mcpPort] = [await freePort(), await freePort(), await freePort()];
    // Production as docs/operations.md has it, on loopback ports the processes are told before they start.
    prod = await startStack({
      SVC_ENV: 'production',
      SVC_DEMO: 'false',
      SVC_HOST: '127.0.0.1',
      SVC_CONTROL_PORT: String(control),
      SVC_GATEWAY_PORT: String(gateway),
      SVC_MCP_PORT: String(mcpPort),
      SVC_PUBLIC_URL: `http://127.0.0.1:${control}`,
      SVC_GATEWAY_URL: `http://127.0.0.1:${gateway}`,
      SVC_MCP_URL: `http://127.0.0.1:${mcpPort}`,
      SVC_SECRET_KEY: randomBytes(32).toString('hex'),
      SVC_SMTP_URL: smtpProd.url,
      SVC_MAIL_FROM: 'svc <no-reply@example.com>',
      SVC_CHALLENGE_SECRET: 'turnstile-test-secret',
      SVC_STRIPE_SECRET_KEY: 'sk_test_local_stand_in',
      SVC_STRIPE_WEBHOOK_SECRET: 'whsec_local_stand_in',
    });
  }, 90_000);
  afterAll(async () => {
    await prod?.stop();
    await smtpProd?.close();
  });

  it('Claude Code gets a keyless entry and is sent to its own OAuth sign-in (svc names the step)', async () => {
    const t = tempHome();
    cleanups.push(t.cleanup);
    const work = join(t.home, 'work');
    mkdirSync(work);
    const said = await runSvc(['connect', '--client', 'claude-code'], { home: t.home, cwd: work, stack: prod });
    expect(said.code, said.stderr).toBe(0);
    expect(said.stdout).toContain('claude-code: in Claude Code: /mcp, then svc, then Authenticate');
    const r = await runClient(BIN.claude, ['mcp', 'list'], {
      env: { HOME: t.home, ...quiet },
      cwd: work,
      timeoutMs: 90_000,
    });
    // Claude Code read svc's 401 and its protected-resource metadata: it offers the OAuth sign-in.
    expect(r.stdout).toMatch(/svc: http:\/\/127\.0\.0\.1:\d+\/mcp \(HTTP\) - ! Needs authentication/);
  }, 120_000);
});
