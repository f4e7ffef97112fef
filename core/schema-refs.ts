/**
 * References between stored schemas. An import inlines a listing's schemas where it can; a recursive schema, or one
 * too large to inline, stays a `{ "$ref": "#/components/schemas/<Name>" }` to a named component of the listing.
 * The listing's schema view (`GET /v1/apis/:slug/schema`) carries those components under `components.schemas`, so
 * the same reference string resolves against the view as it does against an OpenAPI document. MCP `get_schema` and
 * the CLI call these functions; they import nothing from the control plane.
 */
import { isJsonObject, type JsonObject } from './json-object.js';

export const COMPONENT_REF_PREFIX = '#/components/schemas/';

export type SchemaComponents = Record<string, unknown>;

/** `#/components/schemas/<name>` with the name escaped as a JSON Pointer segment. */
export function componentRef(name: string): string {
  return COMPONENT_REF_PREFIX + name.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** The component a reference names, or undefined when it is not a `#/components/schemas/` reference or is missing. */
export function resolveSchemaRef(components: SchemaComponents, ref: string): unknown {
  if (!ref.startsWith(COMPONENT_REF_PREFIX)) return undefined;
  let raw = ref.slice(COMPONENT_REF_PREFIX.length);
  try {
    raw = decodeURIComponent(raw);
  } catch {
    // not percent-encoded: use as is
  }
  const name = raw.replace(/~1/g, '/').replace(/~0/g, '~');
  return Object.hasOwn(components, name) ? components[name] : undefined;
}

/**
 * The schema with its component references replaced by the components, for display. A reference already being
 * expanded higher up (recursion) stays a `$ref`, and expansion stops at `maxDepth` references deep, so the result
 * is always finite; every `$ref` left in it still resolves with `resolveSchemaRef`.
 */
export function expandSchemaRefs(schema: unknown, components: SchemaComponents, maxDepth = 8): unknown {
  const walk = (v: unknown, open: Set<string>): unknown => {
    if (Array.isArray(v)) return v.map((x) => walk(x, open));
    if (!isJsonObject(v)) return v;
    const ref = v.$ref;
    if (typeof ref === 'string') {
      const target = resolveSchemaRef(components, ref);
      if (target === undefined || open.has(ref) || open.size >= maxDepth) return v;
      const next = new Set(open).add(ref);
      const { $ref: _drop, ...siblings } = v;
      const expanded = walk(target, next);
      return isJsonObject(expanded) ? { ...expanded, ...(walk(siblings, open) as JsonObject) } : expanded;
    }
    const out: JsonObject = {};
    for (const [k, x] of Object.entries(v)) out[k] = walk(x, open);
    return out;
  };
  return walk(schema, new Set());
}

/** Every `$ref` in `value` that does not resolve against `components` (an empty list means nothing is lost). */
export function unresolvedSchemaRefs(value: unknown, components: SchemaComponents): string[] {
  const bad: string[] = [];
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (isJsonObject(v)) {
      if (typeof v.$ref === 'string' && resolveSchemaRef(components, v.$ref) === undefined) bad.push(v.$ref);
      for (const x of Object.values(v)) walk(x);
    }
  };
  walk(value);
  return bad;
}
