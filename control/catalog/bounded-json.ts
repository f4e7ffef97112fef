/**
 * JSON.stringify with a character budget and depth cap. Dereferenced documents share objects, so a small hostile
 * document can expand exponentially when serialised; this stops at the budget instead of exhausting memory.
 */
import { SvcError } from '../../core/errors.js';

const MAX_DEPTH = 40;

export function boundedJson(value: unknown, maxChars: number): string {
  const out: string[] = [];
  let size = 0;
  const seen = new Set<object>();
  const push = (s: string): void => {
    size += s.length;
    if (size > maxChars)
      throw new SvcError('import_failed', `A schema expands to more than ${maxChars} characters after resolving $refs`);
    out.push(s);
  };
  const walk = (v: unknown, depth: number): void => {
    if (depth > MAX_DEPTH) {
      push('{"$comment":"truncated: nested too deep"}');
      return;
    }
    if (v === null || typeof v === 'number' || typeof v === 'boolean' || typeof v === 'string') {
      push(JSON.stringify(v));
      return;
    }
    if (typeof v !== 'object') {
      push('null');
      return;
    }
    // A cycle left by circular:'ignore' would be a real loop here; print it as a ref marker instead.
    if (seen.has(v)) {
      push('{"$comment":"circular"}');
      return;
    }
    seen.add(v);
    if (Array.isArray(v)) {
      push('[');
      v.forEach((x, i) => {
        if (i) push(',');
        walk(x, depth + 1);
      });
      push(']');
    } else {
      push('{');
      let first = true;
      for (const [k, x] of Object.entries(v)) {
        if (x === undefined || typeof x === 'function') continue;
        if (!first) push(',');
        first = false;
        push(JSON.stringify(k) + ':');
        walk(x, depth + 1);
      }
      push('}');
    }
    seen.delete(v);
  };
  walk(value, 0);
  return out.join('');
}
