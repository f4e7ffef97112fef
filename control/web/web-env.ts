/** The web pages' Hono env: the control plane's AppEnv plus what the page middleware sets per request. */
import { Hono } from 'hono';
import type { AppEnv } from '../lib/http.js';
import type { Principal } from '../auth/principal.js';

/** The signed-in person behind a cookie session. */
export interface WebSession {
  principal: Principal;
  email: string;
  orgName: string;
}

export interface WebEnv {
  Variables: AppEnv['Variables'] & {
    /** Set by `loadWebSession` when the session cookie names a live session. */
    webSession: WebSession | undefined;
    /** Extra `form-action` sources for this response's CSP (see `allowFormRedirectTo`). */
    cspFormAction: string[] | undefined;
    /** This browser's CSRF secret once read or minted in this request (control/web/csrf.tsx). */
    csrfSecret: string | undefined;
  };
}

export function newWebRouter(): Hono<WebEnv> {
  return new Hono<WebEnv>();
}
