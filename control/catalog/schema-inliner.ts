/**
 * Turns a schema of an imported document into the stored form, without ever expanding the whole document:
 * - local `$ref`s are inlined while the result stays under a size budget;
 * - a recursive `$ref`, or a schema whose inlined form is over the budget, becomes a reference to a named component
 *   (`core/schema-refs.ts`); components are stored once per listing in the same reference form, transitively;
 * - a schema still over the budget in reference form (a huge literal enum, say) is kept truncated with an explicit
 *   `x-svc-truncated` marker and a warning;
 * - a `$ref` that does not resolve (external, or a broken pointer) becomes an `x-svc-unresolved-ref` marker and a
 *   warning, so no stored `$ref` is left that a reader cannot resolve.
 */
import { componentRef, type SchemaComponents } from '../../core/schema-refs.js';
import { isJsonObject, type JsonObject } from '../../core/json-object.js';

/** Characters (approximate JSON size) an inlined schema may take before it is stored in reference form. */
export const MAX_INLINE_SCHEMA_CHARS = 16 * 1024;
/** Characters a schema (or component) may take in reference form before it is truncated. */
export const MAX_SCHEMA_CHARS = 256 * 1024;
const MAX_DEPTH = 64;

/** Thrown (one shared instance, no stack) when an inlined schema would pass the budget. */
const OVER_BUDGET = Object.freeze({ overBudget: true });

export class SchemaInliner {
  readonly #root: JsonObject;
  readonly #names = new Map<string, string>();
  readonly #taken = new Set<string>();
  readonly #components: SchemaComponents = {};
  readonly #pending: string[] = [];
  readonly #warn: (message: string) => void;
  readonly #targets = new Map<string, unknown>();
  /** Inlined form and size of each non-recursive reference, computed once per import and shared. */
  readonly #inlined = new Map<string, { value: unknown; chars: number } | 'too-large'>();
  /** References that are part of a reference cycle: always stored as named components. */
  readonly #recursive = new Set<string>();
  readonly #cycleChecked = new Set<string>();
  readonly #edges = new Map<string, string[]>();
  truncated = 0;

  constructor(root: JsonObject, warn: (message: string) => void) {
    this.#root = root;
    this.#warn = warn;
  }

  /** Follows a local JSON Pointer (`#/a/b~1c`); undefined when it does not resolve. */
  resolvePointer(ref: string): unknown {
    if (this.#targets.has(ref)) return this.#targets.get(ref);
    const target = this.#walkPointer(ref);
    this.#targets.set(ref, target);
    return target;
  }

  #walkPointer(ref: string): unknown {
    if (!ref.startsWith('#')) return undefined;
    let cur: unknown = this.#root;
    const body = ref.slice(1);
    if (body === '') return cur;
    if (!body.startsWith('/')) return undefined;
    for (const raw of body.slice(1).split('/')) {
      let seg = raw;
      try {
        seg = decodeURIComponent(raw);
      } catch {
        // keep raw
      }
      seg = seg.replace(/~1/g, '/').replace(/~0/g, '~');
      if (Array.isArray(cur)) cur = cur[Number(seg)];
      else if (isJsonObject(cur) && Object.hasOwn(cur, seg)) cur = cur[seg];
      else return undefined;
    }
    return cur;
  }

  /** A structural object (parameter, response, request body, path item) behind a chain of `$ref`s. */
  deref(value: unknown, where: string): unknown {
    let cur = value;
    for (let hops = 0; isJsonObject(cur) && typeof cur.$ref === 'string'; hops++) {
      const target = hops < 16 ? this.resolvePointer(cur.$ref) : undefined;
      if (target === undefined) {
        this.#warn(`${where}: $ref ${cur.$ref} does not resolve; left out`);
        return undefined;
      }
      cur = target;
    }
    return cur;
  }

  /** The stored form of one schema; `where` names its place in the document for warnings. */
  schema(value: unknown, where: string): unknown {
    if (value === undefined) return null;
    try {
      return this.#inline(value, { chars: 0 }, 0, where);
    } catch (e) {
      if (e !== OVER_BUDGET) throw e;
    }
    return this.#bounded(this.#refForm(value, where), where);
  }

  /** Components referenced so far, with everything they reference in turn. */
  components(): SchemaComponents {
    while (this.#pending.length) {
      const pointer = this.#pending.shift()!;
      const name = this.#names.get(pointer)!;
      const where = `component ${name}`;
      this.#components[name] = this.#bounded(this.#refForm(this.resolvePointer(pointer), where), where);
    }
    return this.#components;
  }

  #inline(v: unknown, budget: { chars: number }, depth: number, where: string): unknown {
    if (depth > MAX_DEPTH) throw OVER_BUDGET;
    if (!isJsonObject(v) && !Array.isArray(v)) {
      budget.chars += typeof v === 'string' ? v.length + 2 : 6;
      if (budget.chars > MAX_INLINE_SCHEMA_CHARS) throw OVER_BUDGET;
      return v;
    }
    if (Array.isArray(v)) return v.map((x) => this.#inline(x, budget, depth + 1, where));
    const ref = v.$ref;
    if (typeof ref === 'string') {
      const target = this.resolvePointer(ref);
      if (target === undefined) return this.#unresolved(ref, where);
      if (this.#isRecursive(ref)) return this.#componentRefTo(ref);
      const inlined = this.#inlineRef(ref, target, budget, depth, where);
      const siblings = Object.entries(v).filter(([k]) => k !== '$ref');
      if (!siblings.length || !isJsonObject(inlined)) return inlined;
      const out: JsonObject = { ...inlined };
      for (const [k, x] of siblings) out[k] = this.#inline(x, budget, depth + 1, where);
      return out;
    }
    const out: JsonObject = {};
    for (const [k, x] of Object.entries(v)) {
      budget.chars += k.length + 4;
      out[k] = this.#inline(x, budget, depth + 1, where);
    }
    return out;
  }

  /** Inlines a (non-recursive) reference's target once per import: the result is shared by every user. */
  #inlineRef(ref: string, target: unknown, budget: { chars: number }, depth: number, where: string): unknown {
    let known = this.#inlined.get(ref);
    if (known === undefined) {
      const own = { chars: 0 };
      try {
        known = { value: this.#inline(target, own, depth + 1, where), chars: own.chars };
      } catch (e) {
        if (e !== OVER_BUDGET) throw e;
        known = 'too-large';
      }
      this.#inlined.set(ref, known);
    }
    if (known === 'too-large') throw OVER_BUDGET;
    budget.chars += known.chars;
    if (budget.chars > MAX_INLINE_SCHEMA_CHARS) throw OVER_BUDGET;
    return known.value;
  }

  /** The local references directly inside a reference's target (not following them). */
  #refsIn(ref: string): string[] {
    let out = this.#edges.get(ref);
    if (out) return out;
    const found = new Set<string>();
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (isJsonObject(v)) {
        if (typeof v.$ref === 'string' && this.resolvePointer(v.$ref) !== undefined) found.add(v.$ref);
        for (const x of Object.values(v)) walk(x);
      }
    };
    walk(this.resolvePointer(ref));
    out = [...found];
    this.#edges.set(ref, out);
    return out;
  }

  /** Whether a reference lies on a cycle of references (Tarjan's strongly connected components, iteratively). */
  #isRecursive(start: string): boolean {
    if (this.#cycleChecked.has(start)) return this.#recursive.has(start);
    const index = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const onStack = new Set<string>();
    const frames: { node: string; edges: string[]; i: number }[] = [];
    const open = (node: string): void => {
      index.set(node, index.size);
      low.set(node, index.get(node)!);
      stack.push(node);
      onStack.add(node);
      frames.push({ node, edges: this.#refsIn(node), i: 0 });
    };
    open(start);
    while (frames.length) {
      const f = frames[frames.length - 1]!;
      if (f.i < f.edges.length) {
        const next = f.edges[f.i++]!;
        if (this.#cycleChecked.has(next)) continue;
        if (!index.has(next)) open(next);
        else if (onStack.has(next)) low.set(f.node, Math.min(low.get(f.node)!, index.get(next)!));
        continue;
      }
      frames.pop();
      const parent = frames[frames.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(f.node)!));
      if (low.get(f.node) !== index.get(f.node)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== f.node);
      const cyclic = component.length > 1 || this.#refsIn(f.node).includes(f.node);
      for (const m of component) {
        this.#cycleChecked.add(m);
        if (cyclic) this.#recursive.add(m);
      }
    }
    return this.#recursive.has(start);
  }

  /** A copy with every local `$ref` pointed at a named component (no expansion: linear in the input). */
  #refForm(v: unknown, where: string, depth = 0): unknown {
    if (Array.isArray(v)) return v.map((x) => this.#refForm(x, where, depth + 1));
    if (!isJsonObject(v)) return v === undefined ? null : v;
    if (depth > 200) return truncatedMarker('nested too deep');
    const out: JsonObject = {};
    for (const [k, x] of Object.entries(v)) {
      if (k === '$ref' && typeof x === 'string') {
        if (this.resolvePointer(x) === undefined) Object.assign(out, this.#unresolved(x, where));
        else out.$ref = this.#componentRefTo(x).$ref;
      } else out[k] = this.#refForm(x, where, depth + 1);
    }
    return out;
  }

  #bounded(v: unknown, where: string): unknown {
    const size = JSON.stringify(v)?.length ?? 0;
    if (size <= MAX_SCHEMA_CHARS) return v;
    this.truncated++;
    this.#warn(`${where}: schema truncated (${size} characters, limit ${MAX_SCHEMA_CHARS})`);
    const keep: JsonObject = truncatedMarker(`over ${MAX_SCHEMA_CHARS} characters (${size})`);
    if (isJsonObject(v) && typeof v.type === 'string') keep.type = v.type;
    return keep;
  }

  #componentRefTo(pointer: string): { $ref: string } {
    let name = this.#names.get(pointer);
    if (name === undefined) {
      name = uniqueName(componentName(pointer), this.#taken);
      this.#taken.add(name);
      this.#names.set(pointer, name);
      this.#pending.push(pointer);
    }
    return { $ref: componentRef(name) };
  }

  #unresolved(ref: string, where: string): JsonObject {
    this.#warn(`${where}: $ref ${ref.slice(0, 200)} does not resolve (only local references are followed)`);
    return { 'x-svc-unresolved-ref': ref.slice(0, 500), description: 'Reference not resolvable at import' };
  }
}

function truncatedMarker(why: string): JsonObject {
  return { 'x-svc-truncated': true, description: `Schema truncated at import: ${why}` };
}

/** `#/components/schemas/Pet` and `#/definitions/Pet` become `Pet`; other pointers their joined segments. */
function componentName(pointer: string): string {
  const segs = pointer
    .replace(/^#\/?/, '')
    .split('/')
    .map((s) => {
      try {
        return decodeURIComponent(s).replace(/~1/g, '/').replace(/~0/g, '~');
      } catch {
        return s;
      }
    });
  const named =
    (segs[0] === 'components' && segs[1] === 'schemas' && segs.length === 3) ||
    (segs[0] === 'definitions' && segs.length === 2);
  const raw = named ? segs[segs.length - 1]! : segs.filter((s) => s !== 'components').join('_');
  return raw.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 120) || 'Schema';
}

function uniqueName(base: string, taken: Set<string>): string {
  if (!taken.has(base)) return base;
  for (let i = 2; ; i++) if (!taken.has(`${base}_${i}`)) return `${base}_${i}`;
}
