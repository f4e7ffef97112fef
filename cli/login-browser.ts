/**
 * `svc login` without flags, as `gh auth login` does it. Loopback flow: listen on 127.0.0.1:<random>, open the
 * control plane's /cli/login with a `state` and a PKCE S256 challenge, wait for the redirect to /callback, and
 * exchange the one-time code. Device flow (`--no-browser`, SSH, CI): show a short code to enter on /cli/device and
 * poll until the person confirms.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { z } from 'zod';
import { CliSessionSchema, DeviceLoginSchema } from '../core/schemas/identity.schemas.js';
import { api, config } from './client.js';
import { CliFailure } from './failure.js';
import { instruct } from './output.js';
import { openInBrowser } from './open-url.js';
import { withSpinner } from './spinner.js';

export type CliSession = z.infer<typeof CliSessionSchema>;

const WAIT_MS = 5 * 60_000;
const b64url = (b: Buffer) => b.toString('base64url');

export function noBrowserHere(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.SSH_CONNECTION || env.SSH_TTY || env.CI);
}

export async function loopbackLogin(): Promise<CliSession> {
  const state = b64url(randomBytes(24));
  const verifier = b64url(randomBytes(48));
  const challenge = b64url(createHash('sha256').update(verifier).digest());
  let done: (v: { code: string; redirectUri: string }) => void = () => undefined;
  let fail: (e: Error) => void = () => undefined;
  const got = new Promise<{ code: string; redirectUri: string }>((res, rej) => {
    done = res;
    fail = rej;
  });
  const server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (u.pathname !== '/callback') {
      res.writeHead(404).end();
      return;
    }
    const code = u.searchParams.get('code');
    const ok = u.searchParams.get('state') === state && Boolean(code);
    res.writeHead(ok ? 200 : 400, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      ok
        ? '<!doctype html><title>svc</title><p>The svc CLI is signed in. You can close this window.</p>'
        : '<!doctype html><title>svc</title><p>This sign-in does not match the waiting CLI; run svc login again.</p>',
    );
    if (ok && code) done({ code, redirectUri });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const redirectUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
  const url = `${config().apiUrl}/cli/login?${new URLSearchParams({
    redirect_uri: redirectUri,
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  })}`;
  const timer = setTimeout(
    () =>
      fail(
        new CliFailure(
          'api',
          'login_timeout',
          'Nobody confirmed in the browser within 5 minutes',
          null,
          'svc login --no-browser',
        ),
      ),
    WAIT_MS,
  );
  try {
    await openInBrowser(url);
    const { code } = await withSpinner('Waiting for you to confirm in the browser', () => got);
    return await api('POST', '/v1/auth/cli/token', CliSessionSchema, {
      auth: 'none',
      body: { code, code_verifier: verifier, redirect_uri: redirectUri },
    });
  } finally {
    clearTimeout(timer);
    server.close();
  }
}

export async function deviceLogin(): Promise<CliSession> {
  const d = await api('POST', '/v1/auth/cli/device', DeviceLoginSchema, { auth: 'none' });
  instruct(`Open ${d.verification_uri} in a browser and enter the code ${d.user_code}`);
  const until = Date.now() + d.expires_in * 1000;
  return withSpinner('Waiting for you to confirm', async () => {
    while (Date.now() < until) {
      await new Promise((r) => setTimeout(r, d.interval * 1000));
      try {
        return await api('POST', '/v1/auth/cli/token', CliSessionSchema, {
          auth: 'none',
          body: { device_code: d.device_code },
        });
      } catch (e) {
        if (!(e instanceof CliFailure && e.code === 'authorization_pending')) throw e;
      }
    }
    throw new CliFailure(
      'api',
      'expired_token',
      'The code expired before anyone confirmed it',
      400,
      'svc login --no-browser',
    );
  });
}
