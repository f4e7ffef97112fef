/**
 * Who a credential belongs to (GET /v1/me, control/orgs/me.service.ts). Shared by the REST route, the service,
 * MCP tools and the CLI. Plain zod: importing this registers nothing.
 */
import { z } from 'zod';
import { ALL_SCOPES } from '../scopes.js';
import { CentsAmount, Timestamp } from './common.schemas.js';

export const MeSchema = z
  .object({
    org: z.object({
      id: z.string(),
      name: z.string(),
      status: z.enum(['active', 'suspended']),
      origin: z.enum(['register', 'signup', 'login', 'admin']),
      email: z.string().nullable(),
      email_verified: z.boolean(),
      created_at: Timestamp,
    }),
    user: z
      .object({ id: z.string(), email: z.string(), name: z.string().nullable(), role: z.enum(['owner', 'admin']) })
      .nullable()
      .meta({ description: 'null for an API key no person created (anonymous registration)' }),
    roles: z.array(z.enum(['owner', 'admin'])),
    credential: z.object({
      type: z.enum(['api_key', 'session']),
      key_id: z.string().nullable(),
      session_id: z.string().nullable(),
      scopes: z.array(z.enum(ALL_SCOPES)),
    }),
    balance: z.object({ credit_cents: CentsAmount, pending_cents: CentsAmount }),
  })
  .meta({ id: 'Me' });
export type Me = z.infer<typeof MeSchema>;

// Inputs and answers of sign-up, registration, email verification and login.

/** An email as every identity operation takes it: trimmed and lower-cased. */
export const EmailSchema = z.string().trim().toLowerCase().email().max(254);

/** The answer of operations that only queue a mail: identical whether or not the address has an account. */
export const AcceptedSchema = z.object({ status: z.string(), message: z.string() });

/** POST /v1/register and svc_register: the key is shown once. */
export const RegistrationSchema = z.object({
  api_key: z.string(),
  key_id: z.string(),
  org_id: z.string(),
  scopes: z.array(z.string()),
  credit_cents: z.literal(0),
});
export type Registration = z.infer<typeof RegistrationSchema>;

/** POST /v1/signup (and /v1/auth/signup). */
export const SignupInputSchema = z
  .object({
    email: EmailSchema,
    name: z.string().trim().min(1).max(100).optional(),
    challenge_token: z
      .string()
      .min(1)
      .max(4096)
      .optional()
      .meta({ description: 'Bot-challenge (Turnstile-style) token; required in production' }),
  })
  .strict();

/** POST /v1/auth/email (attach an email to an anonymous org) and POST /v1/auth/login/request. */
export const EmailInputSchema = z.object({ email: EmailSchema }).strict();
export type EmailInput = z.infer<typeof EmailInputSchema>;

/** POST /v1/auth/verify-email. */
export const VerifyEmailInputSchema = z.object({ token: z.string().min(1).max(200) }).strict();

export const EmailVerifiedSchema = z.object({
  verified: z.literal(true),
  org_id: z.string(),
  email: z.string(),
  released_credit_cents: z.number().int(),
  elevated_key_ids: z.array(z.string()),
});
export type EmailVerified = z.infer<typeof EmailVerifiedSchema>;

/** POST /v1/auth/login/verify. */
export const LoginVerifyInputSchema = z
  .object({ email: EmailSchema, code: z.string().regex(/^\d{6}$/, 'must be 6 digits') })
  .strict();
export type LoginVerifyInput = z.infer<typeof LoginVerifyInputSchema>;

/** A session token (sess_…), shown once. */
export const LoginResultSchema = z.object({
  session_token: z.string(),
  expires_at: z.string(),
  org_id: z.string(),
  user_id: z.string(),
  new_account: z.boolean(),
  starter_credit_cents: z.number().int(),
});
export type LoginResult = z.infer<typeof LoginResultSchema>;

export const LogoutResultSchema = z.object({ ended: z.literal(true) });

/** POST /v1/auth/cli/token (`svc login`): the loopback flow's code, or the device flow's device_code. */
export const CliTokenInputSchema = z
  .object({
    code: z.string().min(1).max(200).optional(),
    code_verifier: z.string().min(43).max(128).optional(),
    redirect_uri: z.string().min(1).max(500).optional(),
    device_code: z.string().min(1).max(200).optional(),
  })
  .strict()
  .meta({
    description: 'Either { code, code_verifier, redirect_uri } (loopback flow) or { device_code } (device flow)',
  });

/** The session `svc login` stores. */
export const CliSessionSchema = z.object({ session_token: z.string(), expires_at: z.string(), org_id: z.string() });

/** POST /v1/auth/cli/device: what `svc login --no-browser` shows and polls with. */
export const DeviceLoginSchema = z.object({
  device_code: z.string(),
  user_code: z.string(),
  verification_uri: z.string(),
  interval: z.number().int(),
  expires_in: z.number().int(),
});
