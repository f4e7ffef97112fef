/** The human view of one of your APIs: its facts, then its endpoints as a table (provider get, patch, pricing). */
import type { ProviderApiDetail } from '../../../core/schemas/providers.schemas.js';
import { describe, plural, table } from '../../output.js';
import { endpointRows } from '../_shared.js';

export async function apiDetailText(api: ProviderApiDetail): Promise<string> {
  const { endpoints, ...facts } = api;
  const rows = endpointRows(endpoints);
  return [
    await describe(facts),
    '',
    plural(endpoints.length, 'endpoint'),
    await table(rows, [
      'endpoint_id',
      'method',
      'path',
      'price_cents',
      'discounts',
      'pending_price_cents',
      'pending_from',
      'removed',
    ]),
  ].join('\n');
}
