/**
 * Measures how large a document becomes once its local `$ref`s are expanded, without expanding it (memoized per
 * pointer, linear time). A few KB of nested refs can expand to billions of nodes; validators and dereferencers
 * walk that tree, so oversized documents are refused before any parser sees them.
 */
export const MAX_EXPANDED_NODES = 250_000;

type Json = unknown;

function resolvePointer(root: Json, ref: string): Json {
  if (!ref.startsWith('#')) return undefined;
  let cur: Json = root;
  for (const raw of ref.slice(1).split('/').slice(1)) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Record<string, Json>)[key];
  }
  return cur;
}

/** Node count of the fully expanded document (cycles count once); stops counting past `cap`. */
export function expandedSize(root: Json, cap = MAX_EXPANDED_NODES): number {
  const memo = new Map<string, number>();
  const inProgress = new Set<string>();
  const size = (node: Json, depth: number): number => {
    if (depth > 200) return cap + 1;
    if (typeof node !== 'object' || node === null) return 1;
    const ref = (node as { $ref?: unknown }).$ref;
    if (typeof ref === 'string') {
      if (memo.has(ref)) return memo.get(ref)!;
      if (inProgress.has(ref)) return 1;
      inProgress.add(ref);
      const s = Math.min(cap + 1, size(resolvePointer(root, ref), depth + 1));
      inProgress.delete(ref);
      memo.set(ref, s);
      return s;
    }
    let total = 1;
    for (const child of Object.values(node as Record<string, Json>)) {
      total += size(child, depth + 1);
      if (total > cap) return cap + 1;
    }
    return total;
  };
  return size(root, 0);
}
