/**
 * A cookie-keeping form client for page tests without a browser: GET a page, read its CSRF token, POST forms,
 * follow nothing automatically (redirects are asserted). For real-browser flows use helpers/browser.ts.
 */
export interface PageResponse {
  status: number;
  headers: Headers;
  html: string;
  location: string | null;
}

export class WebClient {
  readonly cookies = new Map<string, string>();
  constructor(readonly base: string) {}

  async get(path: string): Promise<PageResponse> {
    return this.#send('GET', path);
  }

  /** Posts a urlencoded form; pass `csrf_token` yourself (see `csrfOf`) or leave it out to test the refusal. */
  async post(path: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<PageResponse> {
    return this.#send('POST', path, new URLSearchParams(form).toString(), {
      'content-type': 'application/x-www-form-urlencoded',
      ...headers,
    });
  }

  /** GETs `path` and posts `form` with the page's CSRF token, like a person submitting the page's form. */
  async submit(pagePath: string, action: string, form: Record<string, string>): Promise<PageResponse> {
    const page = await this.get(pagePath);
    return this.post(action, { ...form, csrf_token: csrfOf(page.html) });
  }

  async #send(method: string, path: string, body?: string, headers: Record<string, string> = {}) {
    const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(this.base + path, {
      method,
      body,
      redirect: 'manual',
      headers: { ...(cookie ? { cookie } : {}), ...headers },
    });
    for (const set of res.headers.getSetCookie()) {
      const [pair = '', ...attrs] = set.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attrs.some((a) => /^\s*max-age=0\b/i.test(a) || /expires=Thu, 01 Jan 1970/i.test(a));
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return { status: res.status, headers: res.headers, html: await res.text(), location: res.headers.get('location') };
  }
}

export function csrfOf(html: string): string {
  const m = /name="csrf_token" value="([0-9a-f]{64})"/.exec(html);
  if (!m) throw new Error('no csrf_token field on the page');
  return m[1]!;
}
