/** Small fetch wrappers for tests: JSON in, parsed JSON (or problem) out, status kept. */
export interface JsonResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export async function call<T = any>(
  base: string,
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<JsonResponse<T>> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: string | undefined;
  if (opts.rawBody !== undefined) {
    body = opts.rawBody;
    headers['content-type'] ??= 'application/json';
  } else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] = 'application/json';
  }
  const res = await fetch(base + path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON */
  }
  return { status: res.status, headers: res.headers, body: parsed as T };
}

/**
 * A chunked HTTP/1.1 body (RFC 9112 §7.1, no trailers) that starts at `at` in `buf`: its bytes and the offset just past
 * its last chunk, or null while `buf` does not hold all of it yet. For tests that read answers off a raw socket.
 */
export function dechunk(buf: Buffer, at: number): { body: Buffer; next: number } | null {
  const parts: Buffer[] = [];
  for (;;) {
    const eol = buf.indexOf('\r\n', at);
    if (eol < 0) return null;
    const size = Number.parseInt(buf.subarray(at, eol).toString('latin1'), 16);
    if (buf.length < eol + 2 + size + 2) return null;
    parts.push(buf.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
    if (size === 0) return { body: Buffer.concat(parts), next: at };
  }
}
