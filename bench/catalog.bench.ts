/**
 * `npm run bench:catalog`: catalog search speed at 10,000 live listings (issue 10, item 6). Seeds a fresh data dir
 * (listings with 4 endpoints each and 30-day usage stats), starts the real control plane, then times sequential
 * requests to GET /v1/catalog/search and the /catalog page for a few typical queries, beside the content-hashed
 * stylesheet (a static response from the same process) as the baseline. Writes bench/results/catalog-<stamp>.json.
 * Targets: API p99 <= 5 ms, page p99 <= 15 ms.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir, loadavg, cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { openDatabase } from '../core/db/database.js';
import { migrateToLatest } from '../core/db/migrate.js';
import { newId } from '../core/ids.js';

const ROOT = resolve(import.meta.dirname, '../..');
const LISTINGS = Number(process.env.BENCH_LISTINGS ?? 10_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 400);
const WARMUP = 50;
const WORDS = ['weather', 'translate', 'geocode', 'payments', 'email', 'images', 'search', 'stocks', 'news', 'sms'];
const CATEGORIES = ['data', 'finance', 'media', 'messaging', 'ai', 'maps', 'devtools', 'other'];

async function seed(dataDir: string): Promise<void> {
  const h = openDatabase(join(dataDir, 'svc.db'));
  await migrateToLatest(h.db);
  const now = Date.now();
  const org = newId('org');
  h.sqlite
    .prepare(
      `INSERT INTO orgs (id, name, origin, email, email_verified_at, created_at) VALUES (?, ?, 'login', ?, ?, ?)`,
    )
    .run(org, 'bench provider', 'bench@example.com', now, now);
  const api = h.sqlite.prepare(
    `INSERT INTO apis (id, org_id, slug, name, summary, description, category, tags, base_url, status, source_kind,
       injection, published_at, publish_terms_accepted_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'http://127.0.0.1:9', 'live', 'body', 'none', ?, ?, ?, ?)`,
  );
  const ep = h.sqlite.prepare(
    `INSERT INTO endpoints (id, api_id, method, path, price_cents, discounts_json, position, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, '[]', ?, ?, ?)`,
  );
  const stats = h.sqlite.prepare(
    `INSERT INTO api_stats (api_id, calls_30d, success_30d, orgs_30d, gross_30d_cents, computed_at) VALUES (?, ?, ?, ?, ?, ?)`,
  );
  h.sqlite.transaction(() => {
    for (let i = 0; i < LISTINGS; i++) {
      const a = WORDS[i % WORDS.length]!;
      const b = WORDS[(i * 7 + 3) % WORDS.length]!;
      const id = newId('api', now + i);
      api.run(
        id,
        org,
        `bench-${i}`,
        `${a} ${b} api ${i}`,
        `A ${a} service with ${b} extras, number ${i}.`,
        `Longer description of the ${a} API ${i}: endpoints for ${b} and more.`,
        CATEGORIES[i % CATEGORIES.length]!,
        JSON.stringify([a, b]),
        now - i * 1000,
        now,
        now,
        now,
      );
      for (let e = 0; e < 4; e++)
        ep.run(newId('ep', now + i), id, e % 2 ? 'POST' : 'GET', `/${a}/${e}`, (i + e) % 5, e, now, now);
      const calls = (i * 37) % 2000;
      stats.run(id, calls, Math.floor(calls * 0.97), calls % 50, calls * 2, now);
    }
  })();
  await h.close();
}

async function startControl(dataDir: string) {
  const child = spawn(process.execPath, [join(ROOT, 'dist/control/main.js')], {
    env: { ...process.env, SVC_DATA_DIR: dataDir, SVC_CONTROL_PORT: '0', SVC_DEMO: 'false', SVC_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((res, rej) => {
    child.once('exit', (c) => rej(new Error(`control exited ${c}`)));
    createInterface({ input: child.stdout! }).on('line', (l) => {
      try {
        const m = JSON.parse(l) as { ready?: string; url?: string };
        if (m.ready === 'control' && m.url) res(m.url);
      } catch {
        /* log line */
      }
    });
  });
  return { url, stop: () => new Promise<void>((r) => (child.once('exit', () => r()), child.kill('SIGTERM'))) };
}

const pct = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

async function time(url: string): Promise<{ p50: number; p99: number; max: number; bytes: number }> {
  let bytes = 0;
  for (let i = 0; i < WARMUP; i++) await (await fetch(url)).arrayBuffer();
  const ms: number[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    const t = performance.now();
    const res = await fetch(url);
    const body = await res.arrayBuffer();
    ms.push(performance.now() - t);
    if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
    bytes = body.byteLength;
  }
  ms.sort((x, y) => x - y);
  const r = (n: number) => Math.round(n * 100) / 100;
  return { p50: r(pct(ms, 0.5)), p99: r(pct(ms, 0.99)), max: r(ms[ms.length - 1]!), bytes };
}

const dir = mkdtempSync(join(tmpdir(), 'svc-bench-catalog-'));
try {
  const t0 = Date.now();
  await seed(dir);
  process.stderr.write(`seeded ${LISTINGS} listings in ${Date.now() - t0} ms\n`);
  const control = await startControl(dir);
  const css = (await (await fetch(`${control.url}/login`)).text()).match(
    /href="(\/assets\/style\.[0-9a-f]+\.css)"/,
  )![1]!;
  const targets: [string, string][] = [
    ['static stylesheet (baseline)', css],
    ['API: query=weather', '/v1/catalog/search?query=weather'],
    ['API: query="translate images"', '/v1/catalog/search?query=translate%20images'],
    ['API: category=finance sort=popularity', '/v1/catalog/search?category=finance&sort=popularity'],
    ['API: query=stocks max_price_cents=0', '/v1/catalog/search?query=stocks&max_price_cents=0'],
    ['page: /catalog?q=weather', '/catalog?q=weather'],
    ['page: /catalog?q=translate+images&sort=price', '/catalog?q=translate+images&sort=price'],
    ['page: /catalog (no query)', '/catalog'],
  ];
  const results: Record<string, Awaited<ReturnType<typeof time>>> = {};
  for (const [name, path] of targets) {
    results[name] = await time(control.url + path);
    process.stderr.write(`${name.padEnd(48)} p50 ${results[name].p50} ms  p99 ${results[name].p99} ms\n`);
  }
  await control.stop();
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
  const out = {
    at: new Date().toISOString(),
    listings: LISTINGS,
    requests_per_target: REQUESTS,
    sequential: true,
    loadavg_start: loadavg(),
    cpus: cpus().length,
    results,
  };
  writeFileSync(join(ROOT, `bench/results/catalog-${stamp}.json`), JSON.stringify(out, null, 2) + '\n');
  process.stdout.write(JSON.stringify(out, null, 2) + '\n');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
