/**
 * Settings shared by every svc process, parsed once from SVC_* environment variables with zod.
 * A bad value stops the process with one message naming every bad variable (see docs/config.md).
 */
import { availableParallelism } from 'node:os';
import { resolve, join } from 'node:path';
import { z } from 'zod';
import type { MetricsConfig } from './metrics.js';

const port = (def: number) => z.coerce.number().int().min(0).max(65535).default(def);
const cents = (def: number) => z.coerce.number().int().min(0).max(10_000_000).default(def);
const bool = (def: boolean) =>
  z
    .enum(['1', '0', 'true', 'false', 'yes', 'no'])
    .default(def ? 'true' : 'false')
    .transform((v) => v === '1' || v === 'true' || v === 'yes');
const optionalUrl = z.string().url().optional();

const EnvSchema = z.object({
  SVC_ENV: z.enum(['production', 'development']).default('development'),
  SVC_HOST: z.string().min(1).default('127.0.0.1'),
  SVC_DATA_DIR: z.string().min(1).default('./data'),
  SVC_DB_FILE: z.string().min(1).optional(),
  /** PostgreSQL 15+ for every process (docs/scale-out.md); unset: the SQLite file in the data dir. */
  SVC_DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\/\S+$/, 'must be a postgres:// or postgresql:// URL')
    .optional(),
  SVC_CONTROL_PORT: port(4000),
  SVC_GATEWAY_PORT: port(4001),
  SVC_MCP_PORT: port(4002),
  SVC_DEMO_UPSTREAM_PORT: port(4010),
  SVC_PUBLIC_URL: optionalUrl,
  SVC_GATEWAY_URL: optionalUrl,
  SVC_MCP_URL: optionalUrl,
  SVC_SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, 'must start with smtp:// or smtps://')
    .optional(),
  SVC_MAIL_FROM: z.string().min(3).default('svc <no-reply@svc.localhost>'),
  SVC_CHALLENGE_VERIFY_URL: z.string().url().default('https://challenges.cloudflare.com/turnstile/v0/siteverify'),
  SVC_CHALLENGE_SECRET: z.string().optional(),
  SVC_SIGNUP_CREDIT_CENTS: cents(100),
  SVC_STARTER_CREDIT_CENTS: cents(50),
  SVC_SECRET_KEY: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hex characters (32 bytes)')
    .optional(),
  SVC_ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  SVC_PLATFORM_FEE_BPS: z.coerce.number().int().min(0).max(10_000).default(2000),
  SVC_PRICE_NOTICE_DAYS: z.coerce.number().int().min(0).max(365).default(7),
  SVC_GATEWAY_WORKERS: z.coerce.number().int().min(1).max(64).default(1),
  /**
   * API imports parsed at once (default: one core fewer than the machine has, so the event loop keeps one), waiting
   * before `503 busy`, and heap cap per import (control/catalog/import-pool.ts).
   */
  SVC_IMPORT_WORKERS: z.coerce
    .number()
    .int()
    .min(1)
    .max(16)
    .default(Math.max(1, Math.min(4, availableParallelism() - 1))),
  SVC_IMPORT_QUEUE: z.coerce.number().int().min(0).max(1000).default(8),
  SVC_IMPORT_MAX_HEAP_MB: z.coerce.number().int().min(64).max(16_384).default(2048),
  SVC_REGISTER_RATE_PER_MIN: z.coerce.number().int().min(1).default(20),
  SVC_LOGIN_RATE_PER_HOUR: z.coerce.number().int().min(1).default(5),
  SVC_STRIPE_SECRET_KEY: z.string().optional(),
  SVC_STRIPE_WEBHOOK_SECRET: z.string().optional(),
  SVC_STRIPE_API_BASE: optionalUrl,
  SVC_CLOCK_OFFSET_FILE: z.string().optional(),
  SVC_STRIPE_MAX_NETWORK_RETRIES: z.coerce.number().int().min(0).max(5).default(2),
  /** JSON array of credit packs: [{"id","name","price_cents","credit_cents"}]; bonus = credit - price. */
  SVC_CREDIT_PACKS: z.string().optional(),
  SVC_CHECKOUT_MIN_CENTS: cents(500),
  SVC_CHECKOUT_MAX_CENTS: cents(100_000),
  SVC_AUTO_RELOAD_INTERVAL_MS: z.coerce.number().int().min(50).max(3_600_000).default(30_000),
  SVC_AUTO_RELOAD_MAX_FAILURES: z.coerce.number().int().min(1).max(20).default(3),
  SVC_PAYOUT_MIN_CENTS: cents(1000),
  SVC_PAYOUTS_AUTO: bool(false),
  /** Allow the local test-payments back-end (free test-card credits) in production; never on by default there. */
  SVC_TEST_PAYMENTS: bool(false),
  /** Default: on in development, off in production (docs/operations.md). */
  SVC_DEMO: z
    .enum(['1', '0', 'true', 'false', 'yes', 'no'])
    .optional()
    .transform((v) => (v === undefined ? undefined : v === '1' || v === 'true' || v === 'yes')),
  SVC_LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  /** Comma-separated upstream host names (or IP literals) allowed although private; production only (docs/security.md). */
  SVC_EGRESS_ALLOW: z.string().default(''),
  /** How often leaderboards and listing stats are recomputed (control/market/leaderboards.job.ts). */
  SVC_LEADERBOARD_REFRESH_MS: z.coerce.number().int().min(200).max(86_400_000).default(60_000),
  /** Word searches ranked in memory (control/catalog/search-index.ts); 0 leaves every search to FTS5. */
  SVC_SEARCH_INDEX: bool(true),
  /** Scheduled online backups by the control process (docs/operations.md "Backups"): where, how often, how many kept. */
  SVC_BACKUP_DIR: z.string().min(1).optional(),
  SVC_BACKUP_EVERY: z
    .string()
    .regex(/^\d+(ms|s|m|h|d)$/, 'must be a number with a unit: ms, s, m, h or d (e.g. 6h)')
    .default('24h'),
  SVC_BACKUP_KEEP: z.coerce.number().int().min(1).max(1000).default(7),
  /** Webhooks (docs/webhooks.md): how often due deliveries are sent, the first retry delay, the alert detector. */
  SVC_WEBHOOK_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(1000),
  SVC_WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().min(10).max(3_600_000).default(30_000),
  SVC_ALERTS_INTERVAL_MS: z.coerce.number().int().min(100).max(3_600_000).default(30_000),
  /** Prometheus listeners (core/metrics.ts): control on the port, gateway +1, MCP +2; loopback unless told. */
  SVC_METRICS: bool(true),
  SVC_METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  SVC_METRICS_PORT: port(9464),
});

export type Env = z.infer<typeof EnvSchema>;

export interface Config {
  env: 'production' | 'development';
  isProduction: boolean;
  host: string;
  dataDir: string;
  dbFile: string;
  /** SVC_DATABASE_URL: when set, every process uses this PostgreSQL database instead of `dbFile`. */
  databaseUrl: string | undefined;
  ports: { control: number; gateway: number; mcp: number; demoUpstream: number };
  urls: { control: string; gateway: string; mcp: string };
  smtpUrl: string | undefined;
  mailFrom: string;
  challenge: { verifyUrl: string; secret: string | undefined };
  credits: { signupCents: number; starterCents: number };
  secretKeyHex: string | undefined;
  adminToken: string | undefined;
  platformFeeBps: number;
  priceNoticeDays: number;
  gatewayWorkers: number;
  imports: { workers: number; queue: number; maxHeapMb: number };
  rateLimits: { registerPerMin: number; loginPerHour: number };
  stripe: { secretKey: string | undefined; webhookSecret: string | undefined; apiBase: string | undefined };
  clockOffsetFile: string | undefined;
  billing: BillingConfig;
  demo: boolean;
  logLevel: Env['SVC_LOG_LEVEL'];
  leaderboardRefreshMs: number;
  /** Whether catalog searches use the in-memory index (SVC_SEARCH_INDEX). */
  searchIndex: boolean;
  /** Outbound webhooks and the alert detector (SVC_WEBHOOK_*, SVC_ALERTS_INTERVAL_MS). */
  webhooks: { pollMs: number; retryBaseMs: number; alertsIntervalMs: number };
  /** Prometheus listeners (SVC_METRICS*). */
  metrics: MetricsConfig;
  /** Scheduled backups (SVC_BACKUP_*): off while `dir` is unset. */
  backup: { dir: string | undefined; everyMs: number; keep: number };
  /** SVC_EGRESS_ALLOW split: hosts the production egress rule lets through although they resolve to private addresses. */
  egressAllow: readonly string[];
}

export class ConfigError extends Error {}

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
/** `6h` → 21600000 (the format is checked by the schema). */
function durationMs(text: string): number {
  const m = /^(\d+)(ms|s|m|h|d)$/.exec(text);
  return m ? Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS] : Number.NaN;
}

/** A credit pack: what the buyer pays and what lands in the ledger (credit - price = bonus). */
export interface CreditPack {
  id: string;
  name: string;
  price_cents: number;
  credit_cents: number;
}

export interface BillingConfig {
  packs: readonly CreditPack[];
  checkoutMinCents: number;
  checkoutMaxCents: number;
  autoReloadIntervalMs: number;
  autoReloadMaxFailures: number;
  payoutMinCents: number;
  payoutsAuto: boolean;
  stripeMaxNetworkRetries: number;
  /** Without a Stripe key: development always gets test payments; production only with SVC_TEST_PAYMENTS=true. */
  testPaymentsAllowed: boolean;
}

export const DEFAULT_PACKS: readonly CreditPack[] = [
  { id: 'starter', name: 'Starter', price_cents: 500, credit_cents: 500 },
  { id: 'standard', name: 'Standard', price_cents: 2000, credit_cents: 2100 },
  { id: 'pro', name: 'Pro', price_cents: 5000, credit_cents: 5500 },
];

const PackSchema = z.object({
  id: z.string().regex(/^[a-z0-9_-]{1,40}$/),
  name: z.string().min(1).max(80),
  price_cents: z.number().int().min(50).max(10_000_000),
  credit_cents: z.number().int().min(1).max(10_000_000),
});

function parsePacks(raw: string | undefined): readonly CreditPack[] {
  if (!raw) return DEFAULT_PACKS;
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new ConfigError('Invalid svc configuration:\n  SVC_CREDIT_PACKS: not valid JSON');
  }
  const parsed = z.array(PackSchema).min(1).safeParse(json);
  if (!parsed.success)
    throw new ConfigError(
      `Invalid svc configuration:\n  SVC_CREDIT_PACKS: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
    );
  return Object.freeze(parsed.data);
}

// Long: one flat mapping of every SVC_* setting into the typed Config, in the order of the Config type; split, the one
// list of settings would be scattered.
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${String(i.path[0])}: ${i.message}`);
    throw new ConfigError(`Invalid svc configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  if (e.SVC_ENV === 'production' && e.SVC_CLOCK_OFFSET_FILE) {
    throw new ConfigError('Invalid svc configuration:\n  SVC_CLOCK_OFFSET_FILE: not allowed in production');
  }
  const demo = e.SVC_DEMO ?? e.SVC_ENV !== 'production';
  const dataDir = resolve(e.SVC_DATA_DIR);
  const local = (p: number) => `http://${e.SVC_HOST === '0.0.0.0' ? '127.0.0.1' : e.SVC_HOST}:${p}`;
  return Object.freeze({
    env: e.SVC_ENV,
    isProduction: e.SVC_ENV === 'production',
    host: e.SVC_HOST,
    dataDir,
    dbFile: e.SVC_DB_FILE ? resolve(e.SVC_DB_FILE) : join(dataDir, 'svc.db'),
    databaseUrl: e.SVC_DATABASE_URL,
    ports: {
      control: e.SVC_CONTROL_PORT,
      gateway: e.SVC_GATEWAY_PORT,
      mcp: e.SVC_MCP_PORT,
      demoUpstream: e.SVC_DEMO_UPSTREAM_PORT,
    },
    urls: {
      control: e.SVC_PUBLIC_URL ?? local(e.SVC_CONTROL_PORT),
      gateway: e.SVC_GATEWAY_URL ?? local(e.SVC_GATEWAY_PORT),
      mcp: e.SVC_MCP_URL ?? local(e.SVC_MCP_PORT),
    },
    smtpUrl: e.SVC_SMTP_URL,
    mailFrom: e.SVC_MAIL_FROM,
    challenge: { verifyUrl: e.SVC_CHALLENGE_VERIFY_URL, secret: e.SVC_CHALLENGE_SECRET },
    credits: { signupCents: e.SVC_SIGNUP_CREDIT_CENTS, starterCents: e.SVC_STARTER_CREDIT_CENTS },
    secretKeyHex: e.SVC_SECRET_KEY,
    adminToken: e.SVC_ADMIN_TOKEN,
    platformFeeBps: e.SVC_PLATFORM_FEE_BPS,
    priceNoticeDays: e.SVC_PRICE_NOTICE_DAYS,
    gatewayWorkers: e.SVC_GATEWAY_WORKERS,
    imports: { workers: e.SVC_IMPORT_WORKERS, queue: e.SVC_IMPORT_QUEUE, maxHeapMb: e.SVC_IMPORT_MAX_HEAP_MB },
    rateLimits: { registerPerMin: e.SVC_REGISTER_RATE_PER_MIN, loginPerHour: e.SVC_LOGIN_RATE_PER_HOUR },
    stripe: {
      secretKey: e.SVC_STRIPE_SECRET_KEY,
      webhookSecret: e.SVC_STRIPE_WEBHOOK_SECRET,
      apiBase: e.SVC_STRIPE_API_BASE,
    },
    clockOffsetFile: e.SVC_CLOCK_OFFSET_FILE,
    billing: {
      packs: parsePacks(e.SVC_CREDIT_PACKS),
      checkoutMinCents: e.SVC_CHECKOUT_MIN_CENTS,
      checkoutMaxCents: e.SVC_CHECKOUT_MAX_CENTS,
      autoReloadIntervalMs: e.SVC_AUTO_RELOAD_INTERVAL_MS,
      autoReloadMaxFailures: e.SVC_AUTO_RELOAD_MAX_FAILURES,
      payoutMinCents: e.SVC_PAYOUT_MIN_CENTS,
      payoutsAuto: e.SVC_PAYOUTS_AUTO,
      stripeMaxNetworkRetries: e.SVC_STRIPE_MAX_NETWORK_RETRIES,
      testPaymentsAllowed: e.SVC_ENV !== 'production' || e.SVC_TEST_PAYMENTS,
    },
    demo,
    logLevel: e.SVC_LOG_LEVEL,
    leaderboardRefreshMs: e.SVC_LEADERBOARD_REFRESH_MS,
    searchIndex: e.SVC_SEARCH_INDEX,
    webhooks: {
      pollMs: e.SVC_WEBHOOK_POLL_MS,
      retryBaseMs: e.SVC_WEBHOOK_RETRY_BASE_MS,
      alertsIntervalMs: e.SVC_ALERTS_INTERVAL_MS,
    },
    metrics: { enabled: e.SVC_METRICS, host: e.SVC_METRICS_HOST, port: e.SVC_METRICS_PORT },
    backup: {
      dir: e.SVC_BACKUP_DIR ? resolve(e.SVC_BACKUP_DIR) : undefined,
      everyMs: durationMs(e.SVC_BACKUP_EVERY),
      keep: e.SVC_BACKUP_KEEP,
    },
    egressAllow: Object.freeze(
      e.SVC_EGRESS_ALLOW.split(',')
        .map((h) => h.trim())
        .filter(Boolean),
    ),
  });
}

/**
 * What the control plane needs before it may serve production: every problem at once, like loadConfig. Without an
 * SMTP transport, login and verification codes would have nowhere to go but a log (docs/operations.md).
 */
export function productionProblems(config: Readonly<Config>): string[] {
  if (!config.isProduction) return [];
  const problems: string[] = [];
  if (!config.smtpUrl)
    problems.push('SVC_SMTP_URL: required in production (login and verification codes are sent by mail)');
  return problems;
}

/** Process entry points call this: a config error prints its message and exits 1, no stack trace. */
export function loadConfigOrExit(): Readonly<Config> {
  return orExit(loadConfig);
}

/** Runs a config loader (shared or a process's own); a ConfigError ends the process with its message. */
export function orExit<T>(load: () => T): T {
  try {
    return load();
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(e.message + '\n');
      process.exit(1);
    }
    throw e;
  }
}
