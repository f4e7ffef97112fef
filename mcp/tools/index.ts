/** Every MCP tool, in the order of the spec's three tables (spec §4): consumer, provider, profile. */
import type { ToolDef } from '../tool-kit.js';
import { accountTools } from './account.js';
import { callTools } from './calls.js';
import { catalogTools } from './catalog.js';
import { profileTools } from './profile.js';
import { providerTools } from './provider.js';

const byName = new Map<string, ToolDef>(
  [...accountTools, ...catalogTools, ...callTools, ...providerTools, ...profileTools].map((t) => [t.name, t]),
);

const ORDER = [
  'svc_register',
  'verify_email',
  'discover_tools',
  'search_apis',
  'get_categories',
  'get_market_overview',
  'get_leaderboard',
  'request_api',
  'get_api_details',
  'get_schema',
  'get_balance',
  'create_checkout',
  'billing_portal',
  'billing_setup',
  'get_usage',
  'set_budget',
  'provision_access',
  'call_api',
  'run_probe',
  'provider_list_apis',
  'provider_get_api',
  'provider_create_api',
  'provider_update_api',
  'provider_set_credentials',
  'provider_set_pricing',
  'provider_verify',
  'provider_publish',
  'provider_unpublish',
  'provider_cancel_pending_pricing',
  'provider_analytics',
  'provider_connect_onboard',
  'list_providers',
  'get_provider_profile',
  'get_my_profile',
  'update_my_profile',
] as const;

export const TOOLS: readonly ToolDef[] = ORDER.map((n) => {
  const t = byName.get(n);
  if (!t) throw new Error(`tool ${n} is not defined`);
  return t;
});

/** The scope a tool needs beyond a registered key's, checked in front of the transport (HTTP 403). */
export const TOOL_SCOPES: ReadonlyMap<string, NonNullable<ToolDef['scope']>> = new Map(
  TOOLS.filter((t) => t.scope).map((t) => [t.name, t.scope!]),
);
