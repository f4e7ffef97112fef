/**
 * Tool schemas come from the domain schema modules (core/schemas/*, core/discounts.ts): the schemas each tool
 * advertises in tools/list must equal the JSON Schema of the domain module's zod schema, so a change on either side
 * that is not made on the other fails here. Every tool is classified: a domain schema, or a local one with a reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessMcp, type InProcessMcp } from './in-process.js';
import { z } from 'zod';
import { advertisedSchema } from '../../../mcp/server.js';
import {
  CatalogRequestInputSchema,
  CatalogRequestSchema,
  CatalogSearchResultSchema,
  CategoryListSchema,
  DiscoverInputSchema,
  DiscoverResultSchema,
  LeaderboardSchema,
  ListingDetailSchema,
  ListingSchemaViewSchema,
} from '../../../core/schemas/catalog.schemas.js';
import { KeyCapsSchema, KeyIdSchema, KeyResourceSchema } from '../../../core/schemas/keys.schemas.js';
import { MarketOverviewSchema } from '../../../core/schemas/market.schemas.js';
import {
  CancelledPriceChangeSchema,
  CredentialsResultSchema,
  ProviderAnalyticsSchema,
  ProviderApiDetailSchema,
  ImportedApiSchema,
  ProviderApiListSchema,
  ProviderDirectorySchema,
  ProviderPageSchema,
  ProviderProfileSchema,
  PricingResultSchema,
  PublishResultSchema,
  VerifyResultSchema,
  ProfileUpdateInputSchema,
  ApiImportInputSchema,
  ApiPatchInputSchema,
  CredentialsInputSchema,
  PricingInputSchema,
  PublishInputSchema,
} from '../../../core/schemas/providers.schemas.js';
import { BalanceSchema, CheckoutInputSchema } from '../../../core/schemas/billing.schemas.js';
import { UsageSummarySchema } from '../../../core/schemas/usage.schemas.js';

type Json = Record<string, any>;
const TARGET = { target: 'draft-2020-12' } as const;
/** What tools/list advertises of a domain schema: its JSON Schema, compacted as mcp/server.ts does (issue 29). */
const inputJson = (s: z.ZodType): Json => ({
  type: 'object',
  ...advertisedSchema(s['~standard'].jsonSchema.input(TARGET), 'input'),
});
/** The SDK adds `type: object` to an object root that is only a `$ref` (a schema with a `.meta({ id })`). */
const outputJson = (s: z.ZodType): Json => {
  const j = advertisedSchema(s['~standard'].jsonSchema.output(TARGET), 'output');
  return j.type === undefined ? { type: 'object', ...j } : j;
};
/** A field's JSON Schema as it appears inside an object's input schema. */
const fieldJson = (s: z.ZodType): Json => inputJson(z.object({ f: s })).properties.f;

/** Whole input/output schemas from a domain module, and single fields taken from one (path into inputSchema). */
/** `body`: the tool's input is the domain operation's input plus the path id `api_id` (REST puts it in the path). */
const DOMAIN: Record<
  string,
  { input?: z.ZodType; body?: z.ZodType; output?: z.ZodType; fields?: [string[], z.ZodType][] }
> = {
  discover_tools: { input: DiscoverInputSchema, output: DiscoverResultSchema },
  search_apis: { output: CatalogSearchResultSchema },
  get_categories: { output: CategoryListSchema },
  get_market_overview: { output: MarketOverviewSchema },
  get_leaderboard: { output: LeaderboardSchema },
  request_api: { input: CatalogRequestInputSchema, output: CatalogRequestSchema },
  get_api_details: { output: ListingDetailSchema },
  get_schema: { output: ListingSchemaViewSchema },
  get_usage: { output: UsageSummarySchema },
  set_budget: {
    output: KeyResourceSchema,
    fields: [
      [['key_id'], KeyIdSchema.optional()],
      [['budget_cents'], KeyCapsSchema.shape.budget_cents],
      [['per_call_max_cents'], KeyCapsSchema.shape.per_call_max_cents],
      [['daily_cap_cents'], KeyCapsSchema.shape.daily_cap_cents],
    ],
  },
  provider_list_apis: { output: ProviderApiListSchema },
  provider_get_api: { output: ProviderApiDetailSchema },
  provider_create_api: { input: ApiImportInputSchema, output: ImportedApiSchema },
  provider_update_api: { body: ApiPatchInputSchema, output: ProviderApiDetailSchema },
  provider_set_credentials: { body: CredentialsInputSchema, output: CredentialsResultSchema },
  provider_set_pricing: { body: PricingInputSchema, output: PricingResultSchema },
  provider_verify: { output: VerifyResultSchema },
  provider_publish: { body: PublishInputSchema, output: PublishResultSchema },
  provider_unpublish: { output: ProviderApiDetailSchema },
  provider_cancel_pending_pricing: { output: CancelledPriceChangeSchema },
  provider_analytics: { output: ProviderAnalyticsSchema },
  list_providers: { output: ProviderDirectorySchema },
  get_provider_profile: { output: ProviderPageSchema },
  get_my_profile: { output: ProviderProfileSchema },
  update_my_profile: { input: ProfileUpdateInputSchema, output: ProviderProfileSchema },
  // Input from the domain; the output is MCP's own (LOCAL says why).
  create_checkout: { input: CheckoutInputSchema },
  get_balance: { output: BalanceSchema },
};

/** Tools whose schemas (all, or the output when DOMAIN names only the input) are MCP's own, and why (docs/mcp.md). */
const LOCAL: Record<string, string> = {
  svc_register: 'the registration answer plus bound_to_session (MCP-only), and the input replace (issue 24)',
  verify_email: 'both steps of email verification in one tool (REST has two routes); MCP-only',
  create_checkout: 'the REST answer plus human_action_required (MCP-only)',
  billing_portal: 'the REST answer plus human_action_required (MCP-only)',
  billing_setup: 'the REST answer plus human_action_required (MCP-only)',
  provision_access: 'an MCP-only composition of /v1/me, terms and key state',
  call_api: 'the gateway answer summarised for an agent (MCP-only)',
  run_probe: 'the gateway answer summarised for an agent (MCP-only)',
  provider_connect_onboard: 'the REST answer plus human_action_required (MCP-only)',
};

let mcp: InProcessMcp;
let tools: Json[];
beforeAll(async () => {
  mcp = await startInProcessMcp();
  const r = await mcp.post(
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/list',
      params: {
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    },
    { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' },
  );
  expect(r.status).toBe(200);
  tools = r.json.result.tools;
});
afterAll(() => mcp.stop());

const at = (schema: Json, path: string[]): Json =>
  path.reduce<Json>((s, k) => (k === 'items' ? s.items : s.properties[k]), schema);

describe('tool schemas come from the domain schema modules', () => {
  it('classifies every tool: a domain schema or a local one with a reason', () => {
    const names = tools.map((t) => t.name as string);
    expect(names.length).toBe(35);
    // Domain output, or a local one with a reason; never both, never neither.
    for (const n of names) expect(DOMAIN[n]?.output !== undefined, n).toBe(!(n in LOCAL));
  });

  it("advertises exactly the domain modules' JSON Schemas", () => {
    for (const t of tools) {
      const d = DOMAIN[t.name as string];
      if (!d) continue;
      if (d.input) expect(t.inputSchema, `${t.name} input`).toEqual(inputJson(d.input));
      if (d.body) {
        const { api_id, ...properties } = t.inputSchema.properties as Json;
        expect(api_id, `${t.name} api_id`).toBeDefined();
        const body = inputJson(d.body);
        expect(
          {
            ...t.inputSchema,
            properties,
            required: (t.inputSchema.required as string[]).filter((k) => k !== 'api_id'),
          },
          `${t.name} input`,
        ).toEqual({ ...body, required: body.required ?? [] });
      }
      if (d.output) expect(t.outputSchema, `${t.name} output`).toEqual(outputJson(d.output));
      for (const [path, field] of d.fields ?? []) {
        expect(at(t.inputSchema, path), `${t.name} ${path.join('.')}`).toEqual(fieldJson(field));
      }
    }
  });
});

describe('a tool list an agent can afford (issue 29 item 7)', () => {
  /** Every agent loads tools/list into its context at every start: it was 107 KB, about 95 KB output schemas. */
  const LIMIT = 40 * 1024;

  it('answers tools/list in at most 40 KB in both eras, with an output schema for every tool', async () => {
    const legacy = await mcp.post({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
    expect(legacy.status).toBe(200);
    const modern = await mcp.post(
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/list',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      },
      { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' },
    );
    for (const r of [legacy, modern]) {
      const bytes = Buffer.byteLength(JSON.stringify(r.json));
      expect(bytes).toBeLessThanOrEqual(LIMIT);
      const listed = r.json.result.tools as Json[];
      expect(listed.length).toBe(35);
      for (const t of listed) {
        expect(t.outputSchema?.type, t.name).toBe('object');
        expect(Object.keys(t.outputSchema.properties ?? {}).length, t.name).toBeGreaterThan(0);
        // Each description says what the tool costs.
        expect(t.description, t.name).toMatch(/Free\.|charge/);
      }
    }
  });
});
