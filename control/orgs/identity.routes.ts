/** Identity routes: register, signup, email verification, passwordless login, logout, /v1/me. */
import { createRoute } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { newRouter, type AppEnv } from '../lib/http.js';
import { bearer, jsonBody, jsonResponse, problemResponses } from '../lib/openapi.js';
import { takeAbuseLimit, type AbuseLimit } from '../auth/abuse-limits.js';
import { clientIp } from '../lib/client-ip.js';
import { verifyChallenge } from '../auth/challenge.js';
import { registerAnonymous, requestOrgEmail, signup, verifyEmail } from './orgs.service.js';
import { describeMe } from './me.service.js';
import {
  AcceptedSchema,
  EmailInputSchema,
  EmailVerifiedSchema,
  LoginResultSchema,
  LoginVerifyInputSchema,
  LogoutResultSchema,
  MeSchema,
  RegistrationSchema,
  SignupInputSchema,
  VerifyEmailInputSchema,
} from '../../core/schemas/identity.schemas.js';
import { endSession, requestLoginCode, verifyLoginCode } from '../sessions/sessions.service.js';

export const identityRoutes = newRouter();

function limit(c: Context<AppEnv>, which: AbuseLimit, key: string): void {
  takeAbuseLimit(c.get('ctx'), which, key);
}

identityRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/v1/register',
    tags: ['identity'],
    summary: 'Anonymous agent registration: a new org and a consumer-scoped key, 0 credits',
    responses: {
      201: jsonResponse(RegistrationSchema, 'The key is shown once; also echoed in X-Svc-Key'),
      429: problemResponses[400],
    },
  }),
  async (c) => {
    limit(c, 'register', clientIp(c));
    const reg = await registerAnonymous(c.get('ctx'));
    c.header('x-svc-key', reg.api_key);
    c.header('cache-control', 'no-store');
    return c.json(reg, 201);
  },
);

const signupRoute = (path: string) =>
  createRoute({
    method: 'post',
    path,
    tags: ['identity'],
    summary: 'Web signup; sends a verification email. 100 cents are credited after verification.',
    request: jsonBody(SignupInputSchema),
    responses: {
      202: jsonResponse(AcceptedSchema, 'Same answer whether or not the email has an account'),
      ...problemResponses,
    },
  });

for (const path of ['/v1/signup', '/v1/auth/signup']) {
  identityRoutes.openapi(signupRoute(path), async (c) => {
    const body = c.req.valid('json');
    const ctx = c.get('ctx');
    limit(c, 'signupIp', clientIp(c));
    await verifyChallenge(ctx.config, body.challenge_token, clientIp(c));
    await signup(ctx, body);
    return c.json(
      {
        status: 'verification_sent',
        message: `If ${body.email} can receive mail, a verification token is on its way.`,
      },
      202,
    );
  });
}

identityRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/v1/auth/email',
    tags: ['identity'],
    summary: 'Attach an email to an anonymously registered org; sends a verification token',
    security: bearer,
    request: jsonBody(EmailInputSchema),
    responses: { 202: jsonResponse(AcceptedSchema, 'Verification mail queued'), ...problemResponses },
  }),
  async (c) => {
    await requestOrgEmail(c.get('ctx'), c.get('principal'), c.req.valid('json').email);
    return c.json({ status: 'verification_sent', message: 'Check the mailbox for a verification token.' }, 202);
  },
);

identityRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/v1/auth/verify-email',
    tags: ['identity'],
    request: jsonBody(VerifyEmailInputSchema),
    responses: {
      200: jsonResponse(EmailVerifiedSchema, 'Email verified; withheld credits released; registered keys elevated'),
      ...problemResponses,
    },
  }),
  async (c) => c.json(await verifyEmail(c.get('ctx'), c.req.valid('json').token), 200),
);

identityRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/v1/auth/login/request',
    tags: ['identity'],
    request: jsonBody(EmailInputSchema),
    responses: { 202: jsonResponse(AcceptedSchema, 'Identical for every email'), ...problemResponses },
  }),
  async (c) => {
    await requestLoginCode(c.get('ctx'), c.req.valid('json'), { ip: clientIp(c) });
    return c.json(
      {
        status: 'code_sent',
        message: 'If this email can receive mail, a 6-digit code valid for 10 minutes is on its way.',
      },
      202,
    );
  },
);

identityRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/v1/auth/login/verify',
    tags: ['identity'],
    request: jsonBody(LoginVerifyInputSchema),
    responses: {
      200: jsonResponse(LoginResultSchema, 'A session token (sess_…), shown once'),
      ...problemResponses,
    },
  }),
  async (c) => {
    const result = await verifyLoginCode(c.get('ctx'), c.req.valid('json'), { ip: clientIp(c) });
    c.header('cache-control', 'no-store');
    return c.json(result, 200);
  },
);

identityRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/v1/auth/logout',
    tags: ['identity'],
    security: bearer,
    responses: { 200: jsonResponse(LogoutResultSchema, 'Session ended'), ...problemResponses },
  }),
  async (c) => {
    await endSession(c.get('ctx'), c.get('principal'));
    return c.json({ ended: true as const }, 200);
  },
);

identityRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/me',
    tags: ['identity'],
    security: bearer,
    responses: {
      200: jsonResponse(MeSchema, 'Org, user, roles, credential and balance'),
      ...problemResponses,
    },
  }),
  async (c) => c.json(await describeMe(c.get('ctx'), c.get('principal')), 200),
);
