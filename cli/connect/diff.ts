/**
 * A small line diff for `svc connect --dry-run`: the common head and tail are trimmed and the changed middle is
 * shown as removed and added lines, with up to three lines of context. Linear, so a large ~/.claude.json is fine.
 */
export function lineDiff(file: string, before: string | null, after: string): string {
  const a = before === null ? [] : before.split('\n');
  const b = after.split('\n');
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  if (head === a.length && head === b.length) return '';
  const ctx = 3;
  const from = Math.max(0, head - ctx);
  const out = [`--- ${before === null ? '/dev/null' : file}`, `+++ ${file}`, `@@ -${from + 1} +${from + 1} @@`];
  for (let i = from; i < head; i++) out.push(` ${a[i]}`);
  for (let i = head; i < a.length - tail; i++) out.push(`-${a[i]}`);
  for (let i = head; i < b.length - tail; i++) out.push(`+${b[i]}`);
  for (let i = b.length - tail; i < Math.min(b.length, b.length - tail + ctx); i++) out.push(` ${b[i]}`);
  return out.join('\n');
}
