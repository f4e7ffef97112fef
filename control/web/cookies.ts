/**
 * The two web cookies: the session (holds the `sess_…` token; the database keeps only its hash) and the CSRF
 * secret. Both HttpOnly and SameSite=Lax; in production Secure with the `__Host-` prefix (no Domain, Path=/),
 * so a sibling subdomain cannot plant either one.
 */
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { WebEnv } from './web-env.js';

/** `reveal`: a new key's plaintext, encrypted, for the one page view after a create (control/web/pages/keys.tsx). */
export type WebCookie = 'session' | 'csrf' | 'reveal';

const BASE_NAMES: Record<WebCookie, string> = { session: 'svc_session', csrf: 'svc_csrf', reveal: 'svc_reveal' };

function cookieName(c: Context<WebEnv>, which: WebCookie): string {
  const base = BASE_NAMES[which];
  return c.get('ctx').config.isProduction ? `__Host-${base}` : base;
}

export function readCookie(c: Context<WebEnv>, which: WebCookie): string | undefined {
  return getCookie(c, cookieName(c, which));
}

/** `maxAgeSeconds` undefined makes a browser-session cookie. */
export function writeCookie(c: Context<WebEnv>, which: WebCookie, value: string, maxAgeSeconds?: number): void {
  setCookie(c, cookieName(c, which), value, {
    path: '/',
    httpOnly: true,
    sameSite: 'Lax',
    secure: c.get('ctx').config.isProduction,
    ...(maxAgeSeconds === undefined ? {} : { maxAge: maxAgeSeconds }),
  });
}

export function clearCookie(c: Context<WebEnv>, which: WebCookie): void {
  deleteCookie(c, cookieName(c, which), { path: '/', secure: c.get('ctx').config.isProduction });
}
