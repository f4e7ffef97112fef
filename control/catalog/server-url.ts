/**
 * Which of a document's servers becomes the listing's upstream base URL: relative server URLs resolve against the
 * URL the document was fetched from, and an `https` server wins over an `http` one. The provider can still pick
 * another (`base_url` on create or patch), SSRF-checked like every upstream.
 */
export function pickBaseUrl(
  servers: string[],
  documentUrl: string | null,
): { baseUrl: string | null; candidates: string[] } {
  const candidates: string[] = [];
  for (const raw of servers) {
    let url: URL;
    try {
      url = documentUrl ? new URL(raw, documentUrl) : new URL(raw);
    } catch {
      continue;
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') continue;
    url.search = '';
    url.hash = '';
    const s = url.toString().replace(/\/+$/, '');
    if (!candidates.includes(s)) candidates.push(s);
  }
  const baseUrl = candidates.find((c) => c.startsWith('https://')) ?? candidates[0] ?? null;
  return { baseUrl, candidates: candidates.slice(0, 20) };
}
