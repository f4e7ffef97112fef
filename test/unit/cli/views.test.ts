/**
 * Issue 24 item 3 and issue 22 item 2, the parts a unit can hold: human views never hide data and fit 80 columns,
 * `next` is one command, errors speak commands rather than HTTP, flags are checked before any request, answers are
 * parsed with their core schema. Each test fails on the code before the fix (named in the test).
 */
import type { NextStep } from '../../../core/next-step.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LeaderboardSchema, ListingSchemaViewSchema } from '../../../core/schemas/catalog.schemas.js';
import { MarketOverviewSchema } from '../../../core/schemas/market.schemas.js';
import { ProviderApiDetailSchema } from '../../../core/schemas/providers.schemas.js';
import { ListingTermsSchema } from '../../../core/schemas/terms.schemas.js';
import { BalanceSchema } from '../../../core/schemas/billing.schemas.js';
import { closest, parseStrict } from '../../../cli/args.js';
import { failureFrom, parseAnswer } from '../../../cli/client.js';
import { CliFailure } from '../../../cli/failure.js';
import { forPeople, nextCommand } from '../../../cli/next-step.js';
import { restNextStep } from '../../../core/next-step.js';
import { cell, describe as describeData, fitWidths, label, plural, table, wrap } from '../../../cli/output.js';
import { completionScript } from '../../../cli/completion.js';
import { leaderboardText } from '../../../cli/commands/leaderboard.js';
import { overviewText } from '../../../cli/commands/market.js';
import { termsText } from '../../../cli/commands/terms.js';
import { schemaText } from '../../../cli/commands/inspect.js';
import { apiDetailText } from '../../../cli/commands/provider/_view.js';
import { readStored } from '../../../cli/config-store.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const AT = '2026-11-20T10:00:00.000Z';
const LONG = 'A weather and sentiment API with a long summary that goes on well past any sensible column width';
const summary = (slug: string) => ({
  slug,
  name: `Name of ${slug}`,
  summary: LONG,
  category: 'weather',
  tags: ['a', 'b'],
  provider: { slug: 'acme', display_name: 'Acme APIs' },
  endpoint_count: 3,
  free_endpoints: 1,
  min_price_cents: 2,
  max_price_cents: 250,
  calls_30d: 1234,
  success_rate_30d: 0.99,
  published_at: AT,
});

const width80 = (text: string) => text.split('\n').filter((l) => l.length > 80);

let columns: string | undefined;
beforeEach(() => {
  columns = process.env.COLUMNS;
  process.env.COLUMNS = '80';
});
afterEach(() => {
  if (columns === undefined) delete process.env.COLUMNS;
  else process.env.COLUMNS = columns;
});

describe('human views show their data (before: "entries 1 items", JSON blobs)', () => {
  it('svc leaderboard: every entry as a row with its listing, within 80 columns', async () => {
    const board = LeaderboardSchema.parse({
      board: 'most_used',
      category: null,
      computed_at: AT,
      entries: [
        { rank: 1, score: 1234, listing: summary('demo-weather') },
        { rank: 2, score: 99, listing: summary('another-very-long-listing-slug') },
      ],
    });
    const text = await leaderboardText(board);
    expect(text).not.toMatch(/items/);
    expect(text).toMatch(/1\s+1234\s+demo-weather\s+Name of\s+\$0\.02\s+1234/);
    // Ids stay whole; the prose column (the name) wraps instead.
    expect(text).toContain('another-very-long-listing-slug');
    expect(width80(text)).toEqual([]);
    process.env.COLUMNS = '200';
    expect(await leaderboardText(board)).toContain('another-very-long-listing-slug');
  });

  it('svc market overview: windows and categories as tables, no JSON', async () => {
    const o = MarketOverviewSchema.parse({
      computed_at: AT,
      live_listings: 1,
      providers: 2,
      endpoints: 6,
      windows: {
        '24h': { calls: 1, volume_cents: 0, active_consumers: 1 },
        '7d': { calls: 10, volume_cents: 250, active_consumers: 2 },
        '30d': { calls: 40, volume_cents: 1000, active_consumers: 3 },
      },
      top_categories: [{ category: 'weather', listings: 1, calls_30d: 40 }],
    });
    const text = await overviewText(o);
    expect(text).not.toMatch(/[{}]/);
    expect(text).toContain('1 live listing ·');
    expect(text).toMatch(/30d\s+40\s+\$10\.00\s+3/);
    expect(text).toMatch(/weather\s+1\s+40/);
  });

  it('svc terms show: the document as text with version, state and the page to read it', () => {
    const t = ListingTermsSchema.parse({
      slug: 'byte-shop',
      api_id: 'api_1',
      document: {
        document_id: 'doc_1',
        api_id: 'api_1',
        kind: 'terms',
        source: 'hosted',
        version: '1.2.0',
        acceptance_mode: 'required',
        status: 'activated',
        markdown: '# Byte Shop terms\n\nBe nice.\n',
        created_at: AT,
        activated_at: AT,
      },
      required: true,
      accepted: false,
      accepted_at: null,
    });
    const text = termsText(t);
    expect(text).not.toMatch(/[{}]/);
    expect(text).toContain('version 1.2.0');
    expect(text).toContain('Be nice.');
    expect(text).toContain('svc terms accept byte-shop');
    expect(text).toMatch(/\/apis\/byte-shop$/m);
    expect(text).not.toContain('/v1/');
  });

  it('svc inspect --schema: each endpoint with its price, discounts and schemas (before: "N items")', () => {
    const v = ListingSchemaViewSchema.parse({
      slug: 'demo-weather',
      components: { schemas: { City: { type: 'object', properties: { city: { type: 'string' } } } } },
      endpoints: [
        {
          endpoint_id: 'ep_1',
          method: 'GET',
          path: '/forecast',
          summary: 'Forecast',
          price_cents: 2,
          operation_id: null,
          description: '',
          parameters: [{ name: 'city', in: 'query', required: true }],
          request: null,
          response: { $ref: '#/components/schemas/City' },
          discounts: [{ min_calls: 1000, percent_off: 10 }],
          pending_price: null,
        },
      ],
    });
    const text = schemaText(v);
    expect(text).not.toMatch(/\d+ items/);
    expect(text).toContain('GET /forecast');
    expect(text).toContain('$0.02 per call; 10% off after 1000 calls');
    expect(text).toContain('"name": "city"');
    expect(text).toContain('#/components/schemas/City');
    expect(width80(text)).toEqual([]);
  });

  it('svc provider get: the facts, then the endpoints as a table with dollars (before: "N items")', async () => {
    const api = ProviderApiDetailSchema.parse({
      api_id: 'api_1',
      slug: 'byte-shop',
      name: 'Byte Shop',
      summary: LONG,
      description: LONG,
      category: 'tools',
      tags: [],
      status: 'draft',
      docs_url: null,
      logo_url: null,
      base_url: 'http://127.0.0.1:9',
      health_path: null,
      suspended: false,
      source: { kind: 'openapi_url', url: 'http://127.0.0.1:9/openapi.json' },
      import_report: null,
      credentials: { set: true, fingerprint: 'fp_1', injection: 'bearer', injection_name: null },
      published_at: null,
      last_verified_at: null,
      last_verify_ok: null,
      created_at: AT,
      updated_at: AT,
      endpoints: [
        {
          endpoint_id: 'ep_01jd0000000000000000000000',
          method: 'GET',
          path: '/bytes/with/a/rather/long/path/{id}',
          summary: 'Binary',
          price_cents: 250,
          operation_id: null,
          discounts: [],
          pending_price: {
            change_id: 'pc_1',
            old_price_cents: 250,
            new_price_cents: 300,
            new_discounts: null,
            effective_at: AT,
          },
          removed: false,
        },
      ],
    });
    const text = await apiDetailText(api);
    expect(text).not.toMatch(/items/);
    expect(text).toContain('$2.50');
    expect(text).toContain('$3.00');
    expect(text).toContain('fp_1');
    expect(width80(text)).toEqual([]);
    // Wrapped, not cut: every word of the long summary is still there.
    for (const w of LONG.split(' ')) expect(text).toContain(w);
    process.env.COLUMNS = '200';
    const wide = await apiDetailText(api);
    expect(wide).toContain('ep_01jd0000000000000000000000');
    expect(wide).toContain('/bytes/with/a/rather/long/path/{id}');
  });
});

describe('tables and cells', () => {
  it('wraps the widest columns to fit the width and keeps every character', async () => {
    const rows = [{ slug: 'x'.repeat(70), summary: LONG, price_cents: 5 }];
    const text = await table(rows, ['slug', 'summary', 'price_cents']);
    expect(width80(text)).toEqual([]);
    // Every character is kept: the slug column's pieces, read top to bottom, are the whole slug.
    expect(text.match(/x+/g)?.join('')).toBe('x'.repeat(70));
    for (const w of LONG.split(' ')) expect(text).toContain(w);
    expect(fitWidths([10, 10], 80)).toEqual([10, 10]);
    expect(wrap('abcdefghij', 4)).toBe('abcd\nefgh\nij');
  });

  it('heads *_cents columns without the unit they no longer show (before: "price_cents  $0.02")', async () => {
    expect(label('min_price_cents')).toBe('min_price');
    const text = await table([{ price_cents: 2 }], ['price_cents']);
    expect(text).not.toContain('_cents');
    expect(text).toContain('$0.02');
  });

  it('says 1 call, 2 calls; shows ISO instants readably (before: raw ISO strings)', () => {
    expect(plural(1, 'call')).toBe('1 call');
    expect(plural(2, 'call')).toBe('2 calls');
    expect(cell('effective_from', AT)).toBe('2026-11-20 10:00 UTC');
    expect(cell('accepted_at', new Date(Date.now() - 120_000).toISOString())).toBe('2 min ago');
  });

  it('describes a nested answer in sections, with no "N items" left', async () => {
    const b = BalanceSchema.parse({
      org_id: 'org_1',
      credit_cents: 500,
      pending_cents: 0,
      reserved_cents: 0,
      available_cents: 500,
      payments_mode: 'test',
      card_on_file: false,
      card: null,
      auto_reload: { enabled: true, threshold_cents: 200, amount_cents: 1000, failures: 0, paused: false },
    });
    const text = await describeData({ ...b, list: [{ a: 1 }, { a: 2 }] });
    expect(text).toMatch(/auto_reload\n\s+enabled\s+true/);
    expect(text).toMatch(/threshold\s+\$2\.00/);
    expect(text).toMatch(/list \(2\)/);
    expect(text).not.toMatch(/items|\{/);
  });
});

describe('next steps and error wording', () => {
  const codes = [
    'unauthorized',
    'session_required',
    'challenge_required',
    'api_key_required',
    'key_revoked',
    'insufficient_credits',
    'budget_exceeded',
    'per_call_cap_exceeded',
    'daily_cap_exceeded',
    'price_above_max',
    'card_required',
    'insufficient_scope',
    'free_only_key',
    'terms_not_accepted',
    'listing_not_found',
    'endpoint_not_found',
    'invalid_code',
    'too_many_attempts',
    'accept_terms_required',
    'verification_failed',
    'connection_failed',
  ];
  /** One step of every action of the shared NextStep (core/next-step.ts), as the server sends it. */
  const steps: NextStep[] = [
    { action: 'authenticate' },
    { action: 'log_in' },
    { action: 'verify_email' },
    { action: 'ask_org_admin' },
    { action: 'get_key' },
    { action: 'buy_credits' },
    { action: 'add_card' },
    ...(['budget', 'per_call', 'daily', 'approval_mode'] as const).map((cap) => ({
      action: 'raise_cap' as const,
      cap,
    })),
    { action: 'accept_terms', slug: 's' },
    { action: 'check_price', slug: 's' },
    { action: 'find_listing' },
    { action: 'list_endpoints', slug: 's' },
    { action: 'retry_later' },
  ];

  it('every next is one command: no prose, no backticks, no parentheses (before: "svc login   (or `svc register` …)")', () => {
    const all = [
      ...codes.map((c) => nextCommand(c, null, { slug: 's', endpoint: 'e', apiId: 'api_1', email: 'a@b.test' })),
      ...codes.map((c) => nextCommand(c, null)),
      ...steps.map((step) => nextCommand('x', step)),
    ];
    for (const n of all) {
      expect(n).toMatch(/^(svc|npm) /);
      expect(n).not.toMatch(/[`()]|\s{2}/);
    }
    expect(nextCommand('price_above_max', null, { slug: 'demo', endpoint: 'forecast' })).toBe(
      'svc call demo forecast --quote',
    );
  });

  it('drops the REST wording of a next step, routes and header names from what a person reads', () => {
    for (const action of ['authenticate', 'log_in', 'verify_email'] as const)
      expect(forPeople(`Refused. ${restNextStep({ action })}`)).toBe('Refused.');
    expect(forPeople('No credential was sent. Send Authorization: Bearer <svc_live_… key or sess_… token>.')).toBe(
      'No credential was sent.',
    );
    expect(forPeople('Auto-reload charges a saved card: add one first (POST /v1/billing/setup)')).toBe(
      'Auto-reload charges a saved card: add one first',
    );
    expect(forPeople('The current price is 2 cents, above your X-Svc-Max-Price-Cents of 1.')).toBe(
      'The current price is 2 cents, above your --max-price of 1.',
    );
    expect(forPeople('Unknown pack "gold"; see GET /v1/billing/packs')).toBe('Unknown pack "gold"');
    const f = failureFrom(
      401,
      JSON.stringify({
        code: 'unauthorized',
        title: 'Unauthorized',
        detail: 'Send your API key as `Authorization: Bearer svc_live_…` or `X-Svc-Key`.',
        request_id: 'req_1',
      }),
      true,
    );
    expect(f.message).toBe('Unauthorized');
    expect(f.requestId).toBe('req_1');
    expect(f.next).toBe('svc login');
  });

  it('a broken config file is reported without advice to delete it (it holds keys shown once)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-cfg-'));
    const file = join(dir, 'config.json');
    writeFileSync(file, '[1, 2');
    try {
      readStored(file);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(CliFailure);
      expect((e as CliFailure).code).toBe('config_invalid');
      expect(String((e as CliFailure).next ?? '')).not.toMatch(/\brm\b/);
      expect((e as CliFailure).message).not.toMatch(/delete/);
    }
  });
});

describe('answers and flags are checked, not cast', () => {
  it('an answer of the wrong shape is unexpected_answer, naming the field (before: an unchecked cast)', () => {
    expect(parseAnswer(BalanceSchema.pick({ credit_cents: true }), '{"credit_cents":5}', 200)).toEqual({
      credit_cents: 5,
    });
    try {
      parseAnswer(BalanceSchema.pick({ credit_cents: true }), '{"credit_cents":"5"}', 200);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(CliFailure);
      expect((e as CliFailure).code).toBe('unexpected_answer');
      expect((e as CliFailure).message).toContain('credit_cents');
    }
    expect(() => parseAnswer(BalanceSchema, '<html>', 200)).toThrow(/not JSON/);
  });

  it('checks integer, cents and date flags before any request (before: --limit abc reached the server)', () => {
    const def = {
      limit: { type: 'string', valueHint: 'integer' },
      from: { type: 'string', valueHint: 'date' },
      budget: { type: 'string', valueHint: 'cents|none' },
      quote: { type: 'boolean' },
      query: { type: 'string' },
    } as const;
    expect(() => parseStrict(['--limit', 'abc'], def)).toThrow(/--limit takes a whole number.*'abc'/);
    expect(() => parseStrict(['--from', 'yesterday'], def)).toThrow(/--from takes a date/);
    expect(() => parseStrict(['--from', '2026-13-45'], def)).toThrow(/--from takes a date/);
    expect(() => parseStrict(['--budget', '5.5'], def)).toThrow(/--budget takes whole cents/);
    const ok = parseStrict(['--limit', '10', '--from', '2026-11-01', '--budget', 'none'], def, ['query']);
    expect(ok).toMatchObject({ limit: '10', from: '2026-11-01', budget: 'none', quote: false, query: [] });
  });

  it('suggests the closest flag and command (before: no "did you mean")', () => {
    expect(() => parseStrict(['--limt', '3'], { limit: { type: 'string' } })).toThrow(/did you mean --limit\?/);
    expect(closest('serch', ['search', 'inspect'])).toBe('search');
    expect(closest('zzzz', ['search', 'inspect'])).toBeNull();
  });
});

describe('svc completion zsh', () => {
  it('starts with #compdef svc, so the file works from $fpath (before: the line was missing)', () => {
    const script = completionScript('zsh', [{ path: '', subs: ['search'], flags: [], values: {} }]);
    expect(script.split('\n')[0]).toBe('#compdef svc');
  });
});
