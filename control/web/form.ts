/** Reading urlencoded or multipart form fields in page handlers (the body is parsed once and cached by Hono). */
import type { Context } from 'hono';
import { SvcError } from '../../core/errors.js';
import type { WebEnv } from './web-env.js';

/** A text field's value, or undefined when absent or a file. */
export async function formString(c: Context<WebEnv>, name: string): Promise<string | undefined> {
  const v = (await c.req.parseBody())[name];
  return typeof v === 'string' ? v : undefined;
}

/**
 * A dollar amount typed by a person ("5", "5.5", "5.50") as integer cents; empty gives null (no cap).
 * Parsed from the digits, never through a float. Bad input is `validation_failed` naming the field.
 */
export function dollarsToCents(field: string, value: string | undefined): number | null {
  const v = (value ?? '').trim().replace(/^\$/, '');
  if (v === '') return null;
  const m = /^(\d{1,7})(?:\.(\d{1,2}))?$/.exec(v);
  if (!m)
    throw new SvcError('validation_failed', `${field}: enter an amount in dollars, like 5 or 5.25`, {
      errors: [{ path: field, message: 'dollars with at most 2 decimals' }],
    });
  return Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'));
}

/** Cents shown back in a dollars input ("5.25"); empty for null. */
export function centsToDollarsInput(cents: number | null | undefined): string {
  if (cents === null || cents === undefined) return '';
  return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
}
