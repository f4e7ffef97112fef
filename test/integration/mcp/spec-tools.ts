/** The spec's three MCP tool tables (SPEC §4), parameter names only: the one list the tests assert tools against. */
export const SPEC_TOOLS: Record<string, string[]> = {
  // Consumer tools
  // + replace: issue 24 (a client that acts as a key registers another org only on purpose)
  svc_register: ['replace'],
  // Not in the spec's table: issue 24's step for an unverified key (a person's email, then the mailed token)
  verify_email: ['email', 'token'],
  discover_tools: ['query', 'category', 'max_results'],
  search_apis: ['query', 'category', 'sort', 'max_price_cents'],
  get_categories: [],
  get_market_overview: [],
  get_leaderboard: ['board', 'category'],
  request_api: ['query', 'email', 'notes'],
  get_api_details: ['slug'],
  get_schema: ['slug'],
  get_balance: [],
  create_checkout: ['pack', 'amount_cents'],
  billing_portal: [],
  billing_setup: [],
  get_usage: ['from', 'to'],
  set_budget: ['key_id', 'budget_cents', 'per_call_max_cents', 'daily_cap_cents'],
  provision_access: ['slug'],
  // + max_price_cents: the addition (gateway X-Svc-Max-Price-Cents)
  call_api: ['slug', 'endpoint', 'method', 'input', 'max_price_cents'],
  run_probe: ['slug', 'endpoint', 'input', 'max_price_cents'],
  // Provider tools
  provider_list_apis: [],
  provider_get_api: ['api_id'],
  provider_create_api: ['openapi_url', 'rapidapi_url', 'body'],
  provider_update_api: [
    'api_id',
    'name',
    'slug',
    'summary',
    'description',
    'category',
    'tags',
    'base_url',
    'docs_url',
    'logo_url',
    'health_path',
  ],
  // + injection_name: issue 24 (header and query injection need the name)
  provider_set_credentials: ['api_id', 'secret', 'injection', 'injection_name'],
  provider_set_pricing: ['api_id', 'endpoints'],
  provider_verify: ['api_id'],
  provider_publish: ['api_id', 'skip_verify', 'accept_terms'],
  provider_unpublish: ['api_id'],
  provider_cancel_pending_pricing: ['api_id', 'endpoint_id'],
  provider_analytics: [],
  provider_connect_onboard: [],
  // Profile tools
  list_providers: ['query', 'limit', 'offset'],
  get_provider_profile: ['slug'],
  get_my_profile: [],
  update_my_profile: ['slug', 'display_name', 'bio', 'website', 'logo_url'],
};

/** Required parameters (no `?` in the spec). */
export const REQUIRED: Record<string, string[]> = {
  discover_tools: ['query'],
  search_apis: ['query'],
  get_leaderboard: ['board'],
  request_api: ['query'],
  get_api_details: ['slug'],
  get_schema: ['slug'],
  call_api: ['slug', 'endpoint'],
  run_probe: ['slug', 'endpoint'],
  provider_get_api: ['api_id'],
  provider_update_api: ['api_id'],
  provider_set_credentials: ['api_id', 'secret'],
  provider_set_pricing: ['api_id', 'endpoints'],
  provider_verify: ['api_id'],
  provider_publish: ['api_id'],
  provider_unpublish: ['api_id'],
  provider_cancel_pending_pricing: ['api_id', 'endpoint_id'],
  get_provider_profile: ['slug'],
};
