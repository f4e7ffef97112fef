/** The imported OpenAPI document of a listing as stored: gzipped (since migration 0007) or as plain JSON text. */
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import type { Row } from '../../core/db/database.js';

const gunzipAsync = promisify(gunzip);

/** The document's JSON text, or null when the listing has none; decompression runs on libuv's thread pool. */
export async function storedDocumentText(
  api: Pick<Row<'apis'>, 'openapi_gz' | 'openapi_json'>,
): Promise<string | null> {
  if (api.openapi_gz) return (await gunzipAsync(api.openapi_gz)).toString('utf8');
  return api.openapi_json;
}
