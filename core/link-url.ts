/**
 * Links shown publicly (provider website and logo, listing docs and logo): `https:` only (`http:` too in
 * development), no control characters anywhere in the raw value, no user info (`https://a@b`), so no `javascript:`/`file:` link and no header
 * or log injection through a stored URL.
 */
import { z } from 'zod';
import { SvcError, type FieldError } from './errors.js';

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this refuses
const CONTROL = /[\u0000-\u001f\u007f]/;

/** C0 controls and DEL: CR/LF split headers and log lines, NUL truncates, none belongs in a URL or a secret. */
export function hasControlCharacters(value: string): boolean {
  return CONTROL.test(value);
}

/**
 * The request-schema half of the rule. The control-character check must see the raw value: zod's url() returns the
 * WHATWG-normalised URL, which silently drops CR, LF and tab.
 */
export function linkUrlSchema(max: number) {
  return z
    .string()
    .max(max)
    .refine((v) => !CONTROL.test(v), 'must not contain control characters (CR, LF, NUL, tab…)')
    .pipe(z.string().url())
    .refine((v) => !hasUserInfo(v), CREDENTIALS);
}

const CREDENTIALS = 'must not contain a user name or password (https://name@host): it hides the real host';

/**
 * `https://trusted.example@evil.example` opens evil.example: a link with user info misleads whoever reads it and may
 * carry a secret, so no public link or redirect URI may have one.
 */
export function hasUserInfo(value: string): boolean {
  try {
    const url = new URL(value);
    return url.username !== '' || url.password !== '';
  } catch {
    return false;
  }
}

/** Throws one `validation_failed` naming every bad field; null and undefined values are left alone. */
export function assertLinkUrls(fields: Record<string, string | null | undefined>, production: boolean): void {
  const errors: FieldError[] = [];
  for (const [path, value] of Object.entries(fields)) {
    if (value === null || value === undefined) continue;
    const why = linkUrlProblem(value, production);
    if (why) errors.push({ path, message: why });
  }
  if (errors.length > 0)
    throw new SvcError('validation_failed', errors.map((e) => `${e.path} ${e.message}`).join('; '), { errors });
}

export function linkUrlProblem(value: string, production: boolean): string | null {
  if (CONTROL.test(value)) return 'must not contain control characters (CR, LF, NUL, tab…)';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.username !== '' || url.password !== '') return CREDENTIALS;
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && !production) return null;
  return production ? 'must be an https: URL' : 'must be an https: (or, in development, http:) URL';
}
