/**
 * Headless OAuth 2.1 for tests: what an MCP client and a person at the browser do, over real HTTP against the
 * control plane. `runOAuthFlow` discovers the metadata, registers (DCR) or names a metadata document (CIMD),
 * signs in with the emailed code from the SMTP sink, approves, and exchanges the code with PKCE S256.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loginCodeOf, type SmtpSink } from './smtp-sink.js';

export interface TokenSet {
  access_token: string;
  token_type: string;
  expires_in: number;
  refresh_token: string;
  scope: string;
}

export interface OAuthFlowResult {
  metadata: Record<string, any>;
  clientId: string;
  redirectUri: string;
  tokens: TokenSet;
  /** The browser's cookies after sign-in: a second flow with the same browser skips the email code. */
  browser: Browser;
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** A cookie jar and redirect-free fetch: enough of a browser for the sign-in and consent forms. */
export class Browser {
  readonly cookies = new Map<string, string>();
  constructor(readonly base: string) {}

  async request(method: 'GET' | 'POST', path: string, form?: Record<string, string>): Promise<Response> {
    const headers: Record<string, string> = {};
    if (this.cookies.size) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (form) headers['content-type'] = 'application/x-www-form-urlencoded';
    const url = path.startsWith('http') ? path : this.base + path;
    const res = await fetch(url, {
      method,
      headers,
      redirect: 'manual',
      ...(form ? { body: new URLSearchParams(form).toString() } : {}),
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (value === '' || /max-age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return res;
  }
}

/** The hidden inputs of the first form in `html` posting to `action`. */
export function formFields(html: string, action: string): Record<string, string> {
  const start = html.indexOf(`action="${action}"`);
  if (start < 0) throw new Error(`no form posting to ${action} in:\n${html.slice(0, 2000)}`);
  const form = html.slice(start, html.indexOf('</form>', start));
  const fields: Record<string, string> = {};
  for (const m of form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g))
    fields[m[1]!] = m[2]!
      .replace(/&amp;/g, '&')
      .replace(/&quot;/g, '"')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&#39;/g, "'");
  return fields;
}

export async function discover(controlUrl: string): Promise<Record<string, any>> {
  const res = await fetch(`${controlUrl}/.well-known/oauth-authorization-server`);
  if (res.status !== 200) throw new Error(`metadata: HTTP ${res.status}`);
  return (await res.json()) as Record<string, any>;
}

export async function registerClient(
  metadata: Record<string, any>,
  body: Record<string, unknown>,
): Promise<{ status: number; body: any }> {
  const res = await fetch(metadata.registration_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/** POST form parameters to the token or revocation endpoint. */
export async function postForm(
  url: string,
  params: Record<string, string>,
): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(params).toString(),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

/** The authorization_code grant at the token endpoint (PKCE S256 verifier; `extra` adds e.g. `resource`). */
export function exchangeCode(
  metadata: Record<string, any>,
  p: { code: string; verifier: string; clientId: string; redirectUri: string; extra?: Record<string, string> },
) {
  return postForm(metadata.token_endpoint, {
    grant_type: 'authorization_code',
    code: p.code,
    redirect_uri: p.redirectUri,
    client_id: p.clientId,
    code_verifier: p.verifier,
    ...(p.extra ?? {}),
  });
}

/** A local server that serves one Client ID Metadata Document at its own URL (development allows http loopback). */
export async function serveClientDocument(
  doc: (clientId: string) => Record<string, unknown>,
): Promise<{ clientId: string; fetches: () => number; close: () => Promise<void> }> {
  let count = 0;
  let clientId = '';
  const server: Server = createServer((req, res) => {
    count++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(doc(clientId)));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  clientId = `http://127.0.0.1:${(server.address() as AddressInfo).port}/oauth/client.json`;
  return { clientId, fetches: () => count, close: () => new Promise((r) => server.close(() => r())) };
}

export interface AuthorizeOptions {
  clientId: string;
  redirectUri: string;
  challenge: string;
  state?: string;
  resource?: string;
  scope?: string;
  /** Extra or replacement query parameters (e.g. code_challenge_method=plain for error tests). */
  extra?: Record<string, string>;
}

export function authorizePath(metadata: Record<string, any>, o: AuthorizeOptions): string {
  const url = new URL(metadata.authorization_endpoint);
  const params: Record<string, string> = {
    response_type: 'code',
    client_id: o.clientId,
    redirect_uri: o.redirectUri,
    code_challenge: o.challenge,
    code_challenge_method: 'S256',
    state: o.state ?? randomBytes(8).toString('hex'),
    ...(o.resource ? { resource: o.resource } : {}),
    ...(o.scope ? { scope: o.scope } : {}),
    ...(o.extra ?? {}),
  };
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url.pathname + url.search;
}

/** Signs the browser in through /login with the emailed code, landing on `next`. */
export async function signIn(browser: Browser, smtp: SmtpSink, email: string, next: string): Promise<void> {
  const page = await (await browser.request('GET', `/login?next=${encodeURIComponent(next)}`)).text();
  const res = await browser.request('POST', '/login', { ...formFields(page, '/login'), email });
  if (res.status !== 200) throw new Error(`POST /login: HTTP ${res.status}`);
  const codePage = await res.text();
  const code = loginCodeOf(await smtp.waitFor(email, /code/i));
  const verified = await browser.request('POST', '/login/verify', { ...formFields(codePage, '/login/verify'), code });
  if (verified.status !== 303) throw new Error(`POST /login/verify: HTTP ${verified.status}`);
}

/**
 * Opens the authorization URL in the browser (signing in first when asked) and answers the consent form.
 * Returns the redirect the browser is sent to (the client's redirect_uri with `code` or `error`).
 */
export async function authorize(
  browser: Browser,
  smtp: SmtpSink,
  email: string,
  path: string,
  decision: 'approve' | 'deny' = 'approve',
): Promise<URL> {
  let res = await browser.request('GET', path);
  if (res.status === 303 && res.headers.get('location')!.startsWith('/login')) {
    await signIn(browser, smtp, email, path);
    res = await browser.request('GET', path);
  }
  if (res.status === 303) return new URL(res.headers.get('location')!);
  if (res.status !== 200) throw new Error(`GET ${path}: HTTP ${res.status}\n${await res.text()}`);
  const fields = formFields(await res.text(), '/oauth/authorize');
  const answer = await browser.request('POST', '/oauth/authorize', { ...fields, decision });
  if (answer.status !== 303) throw new Error(`POST /oauth/authorize: HTTP ${answer.status}\n${await answer.text()}`);
  return new URL(answer.headers.get('location')!);
}

export interface FlowOptions {
  controlUrl: string;
  smtp: SmtpSink;
  email: string;
  /** A DCR registration is made when no clientId is given. */
  clientId?: string;
  redirectUri?: string;
  /** RFC 8707 resource, e.g. `${mcpUrl}/mcp`. */
  resource?: string;
  browser?: Browser;
}

/** The whole flow: returns the tokens an MCP client would hold. */
export async function runOAuthFlow(o: FlowOptions): Promise<OAuthFlowResult> {
  const metadata = await discover(o.controlUrl);
  const redirectUri = o.redirectUri ?? 'http://127.0.0.1:33418/callback';
  let clientId = o.clientId;
  if (!clientId) {
    const reg = await registerClient(metadata, { client_name: 'Test agent', redirect_uris: [redirectUri] });
    if (reg.status !== 201) throw new Error(`registration: HTTP ${reg.status} ${JSON.stringify(reg.body)}`);
    clientId = reg.body.client_id as string;
  }
  const browser = o.browser ?? new Browser(o.controlUrl);
  const { verifier, challenge } = pkcePair();
  const state = randomBytes(8).toString('hex');
  const back = await authorize(
    browser,
    o.smtp,
    o.email,
    authorizePath(metadata, {
      clientId,
      redirectUri,
      challenge,
      state,
      ...(o.resource ? { resource: o.resource } : {}),
    }),
  );
  const code = back.searchParams.get('code');
  if (!code || back.searchParams.get('state') !== state) throw new Error(`authorization failed: ${back.toString()}`);
  const token = await exchangeCode(metadata, {
    code,
    verifier,
    clientId,
    redirectUri,
    ...(o.resource ? { extra: { resource: o.resource } } : {}),
  });
  if (token.status !== 200) throw new Error(`token: HTTP ${token.status} ${JSON.stringify(token.body)}`);
  return { metadata, clientId, redirectUri, tokens: token.body as TokenSet, browser };
}
