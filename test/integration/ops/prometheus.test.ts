/**
 * The shipped monitoring works against a real Prometheus (Debian's `prometheus`, started here on a free loopback
 * port): `promtool check rules` accepts ops/prometheus/alerts.yml, Prometheus scrapes all three processes, and
 * every series the dashboard (ops/grafana/svc.json) and the alert rules use exists after some traffic.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT, baseEnv, startProcess, type RunningProcess } from '../../helpers/processes.js';
import { startGateway, type RunningGateway } from '../../helpers/gateway.js';
import { grantCredits, seedOrg, type SeededOrg } from '../../helpers/db.js';
import { makeWorld, gw, type World } from '../gateway/fixture.js';

const run = promisify(execFile);
const PROMETHEUS = process.env.SVC_PROMETHEUS ?? '/usr/bin/prometheus';
const PROMTOOL = process.env.SVC_PROMTOOL ?? '/usr/bin/promtool';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** Metric names a PromQL text refers to (histogram series reduced to their base name). */
function metricNames(text: string): string[] {
  const names = new Set<string>();
  for (const m of text.matchAll(/\b((?:svc|nodejs)_[a-z0-9_]+)\b/g))
    names.add(m[1]!.replace(/_(bucket|sum|count)$/, ''));
  return [...names].sort();
}

describe('Prometheus: rules, scrape, dashboard series', () => {
  let w: World;
  let gateway: RunningGateway;
  let control: RunningProcess;
  let mcp: RunningProcess;
  let consumer: SeededOrg;
  let prometheus: ChildProcess;
  let promUrl: string;
  const dir = mkdtempSync(join(tmpdir(), 'svc-prom-'));

  beforeAll(async () => {
    w = await makeWorld();
    consumer = await seedOrg(w.h);
    await grantCredits(w.h, consumer.orgId, 1000);
    const env = baseEnv(w.dataDir);
    [control, gateway, mcp] = await Promise.all([
      startProcess('control', 'control/main.js', env),
      startGateway(w.dataDir),
      startProcess('mcp', 'mcp/main.js', baseEnv(w.dataDir, { SVC_GATEWAY_URL: 'http://127.0.0.1:9' })),
    ]);
    const target = (p: RunningProcess) => {
      const url = p.ready.metrics_url;
      if (typeof url !== 'string') throw new Error(`${p.name} printed no metrics_url`);
      return new URL(url).host;
    };
    const port = await freePort();
    promUrl = `http://127.0.0.1:${port}`;
    writeFileSync(
      join(dir, 'prometheus.yml'),
      [
        'global: { scrape_interval: 1s, evaluation_interval: 1s }',
        `rule_files: ['${join(ROOT, 'ops/prometheus/alerts.yml')}']`,
        'scrape_configs:',
        ...(
          [
            ['svc-control', control],
            ['svc-gateway', gateway],
            ['svc-mcp', mcp],
          ] as const
        ).map(([job, p]) => `  - { job_name: ${job}, static_configs: [{ targets: ['${target(p)}'] }] }`),
      ].join('\n'),
    );
    prometheus = spawn(
      PROMETHEUS,
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: 'ignore' },
    );
    const deadline = Date.now() + 30_000;
    while (
      !(await fetch(`${promUrl}/-/ready`).then(
        (r) => r.ok,
        () => false,
      ))
    ) {
      if (Date.now() > deadline) throw new Error('prometheus did not become ready');
      await new Promise((r) => setTimeout(r, 200));
    }
  }, 90_000);

  afterAll(async () => {
    prometheus?.kill('SIGTERM');
    await Promise.all([control?.stop(), gateway?.stop(), mcp?.stop()]);
    await w?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('promtool accepts the shipped alert rules', async () => {
    const { stdout } = await run(PROMTOOL, ['check', 'rules', join(ROOT, 'ops/prometheus/alerts.yml')]);
    expect(stdout).toMatch(/SUCCESS: \d+ rules found/);
  });

  it('scrapes all three processes and finds every series the dashboard and the alerts use', async () => {
    // Traffic of each kind: paid calls, a refusal, an upstream failure, control requests, an MCP request.
    for (let i = 0; i < 5; i++)
      expect((await gw(gateway.url, 'GET', `/${w.slug}/users/${i}`, { key: consumer.key })).status).toBe(200);
    expect((await gw(gateway.url, 'GET', `/${w.slug}/users/1`)).status).toBe(401);
    expect((await gw(gateway.url, 'GET', `/${w.slug}/fail`, { key: consumer.key })).status).toBe(500);
    expect((await fetch(`${control.url}/v1/catalog/search?query=x`)).status).toBeLessThan(500);
    // A stateless (2026-07-28) tools/call.
    const mcpCall = await fetch(`${mcp.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${consumer.key}`,
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'search_apis',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'search_apis',
          arguments: { query: 'x' },
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
    });
    expect(mcpCall.status).toBe(200);

    const query = async (q: string) =>
      (
        (await (await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(q)}`)).json()) as {
          data: { result: { metric: Record<string, string>; value: [number, string] }[] };
        }
      ).data.result;
    const deadline = Date.now() + 30_000;
    let up: Awaited<ReturnType<typeof query>> = [];
    while (Date.now() < deadline) {
      up = await query('up');
      if (up.length === 3 && up.every((r) => r.value[1] === '1')) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(up.map((r) => [r.metric.job, r.value[1]]).sort()).toEqual([
      ['svc-control', '1'],
      ['svc-gateway', '1'],
      ['svc-mcp', '1'],
    ]);

    const dashboard = readFileSync(join(ROOT, 'ops/grafana/svc.json'), 'utf8');
    const alerts = readFileSync(join(ROOT, 'ops/prometheus/alerts.yml'), 'utf8');
    const wanted = metricNames(dashboard + alerts).filter((n) => !n.startsWith('svc_backup_'));
    // A scrape or two after the traffic, every wanted series is there.
    let missing: string[] = wanted;
    while (Date.now() < deadline + 15_000 && missing.length > 0) {
      const names = new Set(
        ((await (await fetch(`${promUrl}/api/v1/label/__name__/values`)).json()) as { data: string[] }).data,
      );
      missing = wanted.filter((n) => !names.has(n) && !names.has(`${n}_bucket`));
      if (missing.length > 0) await new Promise((r) => setTimeout(r, 500));
    }
    expect(missing).toEqual([]);
    // And they carry the traffic: five paid calls charged 3 cents each.
    const charged = await query('sum(svc_gateway_charged_cents_total)');
    expect(Number(charged[0]?.value[1])).toBe(15);
  }, 120_000);
});
