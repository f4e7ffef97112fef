import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CODES, SvcError, type ErrorCode } from '../../core/errors.js';
import { problemOf, toSvcError } from '../../core/problem.js';
import { ROOT } from '../helpers/processes.js';

const doc = readFileSync(join(ROOT, 'docs/errors.md'), 'utf8');

describe('error codes', () => {
  it.each(Object.entries(CODES))('%s is documented in docs/errors.md with its status', (code, { status }) => {
    expect(doc).toMatch(new RegExp(`\\| \`${code}\` \\| ${status} \\|`));
  });

  it('codes are stable snake_case', () => {
    for (const code of Object.keys(CODES)) expect(code).toMatch(/^[a-z]+(_[a-z0-9]+)*$/);
  });

  it('builds an RFC 9457 body with code and request_id, never a stack', () => {
    const body = problemOf(new SvcError('daily_cap_exceeded', 'cap 100', { extra: { cap_cents: 100 } }), 'req_1');
    expect(body).toEqual({
      type: 'https://svc.dev/errors/daily_cap_exceeded',
      title: 'Daily cap exceeded',
      status: 402,
      detail: 'cap 100',
      code: 'daily_cap_exceeded',
      request_id: 'req_1',
      cap_cents: 100,
    });
  });

  it('extra members cannot overwrite the standard members', () => {
    const body = problemOf(new SvcError('forbidden', 'x', { extra: { status: 200, code: 'ok' } }), 'req_2');
    expect(body.status).toBe(403);
    expect(body.code).toBe('forbidden');
  });

  it('turns unknown throwables into internal without leaking their message', () => {
    const e = toSvcError(new Error('SQLITE_CONSTRAINT: secret detail'));
    expect(e.code satisfies ErrorCode).toBe('internal');
    expect(problemOf(e, 'r').detail).not.toContain('SQLITE');
  });
});

describe('validation_failed always lists errors[]', () => {
  it('a validation failure not tied to one field names the whole input', () => {
    const body = problemOf(new SvcError('validation_failed', 'Body must be { accept_terms?: boolean }'), 'req_1');
    expect(body.errors).toEqual([{ path: '', message: 'Body must be { accept_terms?: boolean }' }]);
  });

  it('keeps the field errors it was given', () => {
    const errors = [{ path: 'email', message: 'Invalid email' }];
    expect(problemOf(new SvcError('validation_failed', 'x', { errors }), 'req_1').errors).toEqual(errors);
  });

  it('captures no stack for a refusal, keeps one for an internal error, and leaves the global limit as it was', () => {
    const before = Error.stackTraceLimit;
    const refusal = new SvcError('unauthorized', 'no key');
    expect(refusal.stack).not.toMatch(/\n\s+at /);
    expect(String(refusal.stack)).toContain('no key');
    expect(new SvcError('internal', 'bug').stack).toMatch(/\n\s+at /);
    expect(Error.stackTraceLimit).toBe(before);
    expect(new Error('plain').stack).toMatch(/\n\s+at /);
  });
});
