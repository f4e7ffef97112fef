/** The one test for "a JSON object" (parsed input, schemas, problem bodies): any object that is not null or an array. */
export type JsonObject = Record<string, unknown>;

export function isJsonObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
