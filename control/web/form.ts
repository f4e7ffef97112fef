/**
 * Reading forms in page handlers. A page turns the form into an object (`formObject`, dollars already turned into
 * cents by `moneyFields`), parses it with the operation's schema from `core/schemas`, and on failure renders the
 * same form again with `FieldErrors` (one message per field, in the words a person reads: the field's label, never
 * its wire name) and the person's input kept (`FormState.values`).
 */
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { z } from 'zod';
import { SvcError } from '../../core/errors.js';
import { formatCents } from '../../core/money.js';
import type { WebEnv } from './web-env.js';

/** A text field's value, or undefined when absent or a file. */
export async function formString(c: Context<WebEnv>, name: string): Promise<string | undefined> {
  const v = (await c.req.parseBody())[name];
  return typeof v === 'string' ? v : undefined;
}

/** Every text field of the posted form (files and the CSRF token left out). */
export async function formObject(c: Context<WebEnv>): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(await c.req.parseBody()))
    if (typeof v === 'string' && k !== 'csrf_token') out[k] = v;
  return out;
}

/** Field name (as in the form) -> the message shown beside it. */
export type FieldErrors = Record<string, string>;

/** What a form is re-rendered with after a refusal: the typed values and the message per field. */
export interface FormState {
  values: Record<string, string>;
  errors: FieldErrors;
}

const DOLLARS = /^(\d{1,7})(?:\.(\d{1,2}))?$/;

/**
 * A dollar amount typed by a person ("5", "5.5", "5.50") as integer cents; empty gives null (no cap).
 * Parsed from the digits, never through a float. Bad input is `validation_failed` naming the field.
 */
export function dollarsToCents(field: string, value: string | undefined): number | null {
  const v = (value ?? '').trim().replace(/^\$/, '');
  if (v === '') return null;
  const m = DOLLARS.exec(v);
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

/**
 * Dollar inputs of a form as cents for the schema: `{ form field: schema field }`. An empty input becomes null
 * (no cap); one that is not an amount lands in `errors` under the form field.
 */
export function moneyFields(
  values: Record<string, string>,
  map: Record<string, string>,
  errors: FieldErrors,
): Record<string, number | null> {
  const out: Record<string, number | null> = {};
  for (const [formName, schemaName] of Object.entries(map)) {
    try {
      out[schemaName] = dollarsToCents(formName, values[formName]);
    } catch {
      errors[formName] = 'Enter an amount in dollars, like 5 or 5.25.';
    }
  }
  return out;
}

/** How a schema field is presented: its label, the form field it came from, and whether it holds cents. */
export interface FieldLabel {
  label: string;
  /** The form input's name when it differs from the schema path (e.g. `daily_cap` for `daily_cap_cents`). */
  field?: string;
  money?: boolean;
  /** Shown instead of the generic wording when the schema or a service refuses this field (e.g. configured bounds). */
  message?: string;
}

function bound(n: unknown, money: boolean | undefined): string {
  const v = typeof n === 'bigint' ? Number(n) : typeof n === 'number' ? n : Number.NaN;
  return money ? formatCents(v) : v.toLocaleString('en-US');
}

/**
 * A schema refusal as one human message per form field: `Daily cap can be at most $1000000.00`, not
 * `daily_cap_cents: Too big`. Paths without a label are reported under their first segment, still by name.
 */
export function fieldErrorsOf(
  error: z.ZodError,
  labels: Record<string, FieldLabel>,
  into: FieldErrors = {},
): FieldErrors {
  for (const issue of error.issues) {
    const path = String(issue.path[0] ?? '');
    const meta = labels[path] ?? { label: path.replace(/_/g, ' ') || 'This form' };
    const field = meta.field ?? path;
    if (into[field]) continue;
    const label = meta.label;
    const i = issue as { code: string; maximum?: unknown; minimum?: unknown; origin?: string; message: string };
    if (i.code === 'too_big' && i.origin === 'string')
      into[field] = `${label} can be at most ${bound(i.maximum, false)} characters.`;
    else if (i.code === 'too_small' && i.origin === 'string')
      into[field] =
        i.minimum === 1 ? `${label} is required.` : `${label} needs at least ${bound(i.minimum, false)} characters.`;
    else if (meta.message) into[field] = meta.message;
    else if (i.code === 'too_big') into[field] = `${label} can be at most ${bound(i.maximum, meta.money)}.`;
    else if (i.code === 'too_small') into[field] = `${label} must be at least ${bound(i.minimum, meta.money)}.`;
    else if (i.code === 'invalid_value' || i.code === 'invalid_union')
      into[field] = `Choose a valid ${label.toLowerCase()}.`;
    else if (i.code === 'invalid_type' && issue.input === undefined) into[field] = `${label} is required.`;
    else into[field] = `${label}: ${i.message.replace(/^./, (ch) => ch.toLowerCase())}`;
  }
  return into;
}

/**
 * A service refusal (`SvcError` with `errors[]`) mapped onto the form's fields with human labels; a refusal with no
 * field goes under `_form` (shown at the top of the form). Anything else is rethrown.
 */
export function fieldErrorsOfSvc(e: unknown, labels: Record<string, FieldLabel>): FieldErrors {
  if (!(e instanceof SvcError) || e.status >= 500) throw e;
  const out: FieldErrors = {};
  for (const fe of e.errors ?? []) {
    const path = fe.path.split('.')[0] ?? '';
    const meta = labels[path];
    if (meta) out[meta.field ?? path] ??= meta.message ?? `${meta.label}: ${fe.message}`;
  }
  if (Object.keys(out).length === 0) out._form = e.detail;
  return out;
}

/** The page status for a refusal `fieldErrorsOfSvc` accepted: the `SvcError`'s own (4xx), else 400. */
export function refusalStatus(e: unknown): ContentfulStatusCode {
  return (e instanceof SvcError ? e.status : 400) as ContentfulStatusCode;
}
