/** REST side of `svc login` by browser: the token exchange (loopback code or device code) and the device start. */
import { createRoute } from '@hono/zod-openapi';
import { publicBase } from '../billing/billing.routes.js';
import { takeAbuseLimit } from '../auth/abuse-limits.js';
import { clientIp } from '../lib/client-ip.js';
import { SvcError } from '../../core/errors.js';
import { newRouter } from '../lib/http.js';
import { jsonBody, jsonResponse, problemResponses } from '../lib/openapi.js';
import { exchangeCliCode, pollDevice, startDeviceLogin } from './cli-login.service.js';
import { CliSessionSchema, CliTokenInputSchema, DeviceLoginSchema } from '../../core/schemas/identity.schemas.js';

export const cliLoginRoutes = newRouter();

cliLoginRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/v1/auth/cli/token',
    tags: ['identity'],
    summary: 'Exchange a CLI sign-in code (PKCE) or a confirmed device code for a session token',
    request: jsonBody(CliTokenInputSchema),
    responses: { 200: jsonResponse(CliSessionSchema, 'A session token (sess_…), shown once'), ...problemResponses },
  }),
  async (c) => {
    const b = c.req.valid('json');
    const ctx = c.get('ctx');
    let out: Awaited<ReturnType<typeof pollDevice>>;
    if (b.device_code && !b.code) out = await pollDevice(ctx, b.device_code);
    else if (b.code && b.code_verifier && b.redirect_uri && !b.device_code)
      out = await exchangeCliCode(ctx, { code: b.code, code_verifier: b.code_verifier, redirect_uri: b.redirect_uri });
    else
      throw new SvcError('validation_failed', 'Send { code, code_verifier, redirect_uri } or { device_code }', {
        errors: [{ path: 'code', message: 'exactly one flow' }],
      });
    c.header('cache-control', 'no-store');
    return c.json(out, 200);
  },
);

cliLoginRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/v1/auth/cli/device',
    tags: ['identity'],
    summary: 'Start a CLI sign-in without a browser: a device code to poll with and a user code to type',
    responses: {
      201: jsonResponse(
        DeviceLoginSchema,
        'Open verification_uri, enter user_code, then poll /v1/auth/cli/token with device_code',
      ),
      ...problemResponses,
    },
  }),
  async (c) => {
    // Anyone may start one, so it spends the per-address login budget (each start is a row and a code to guess).
    takeAbuseLimit(c.get('ctx'), 'loginIp', clientIp(c));
    c.header('cache-control', 'no-store');
    return c.json(await startDeviceLogin(c.get('ctx'), publicBase(c)), 201);
  },
);
