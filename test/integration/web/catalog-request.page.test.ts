/**
 * "Request an API" (/catalog/request) parses its form with the operation's core schema (CatalogRequestInputSchema,
 * as POST /v1/catalog/requests does): an empty optional field is absent, a bad email is refused and records nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebClient } from '../../helpers/web-client.js';
import { startWebFixture, type WebFixture } from './web-fixture.js';

let f: WebFixture;
beforeAll(async () => {
  f = await startWebFixture();
});
afterAll(() => f.stop());

const rows = () =>
  f.db.db.selectFrom('catalog_requests').select(['query', 'email', 'notes']).orderBy('created_at').execute();

describe('the Request an API page', () => {
  it('records a request; empty optional fields are absent, an email is kept trimmed', async () => {
    const web = new WebClient(f.h.control.url);
    const plain = await web.submit('/catalog/request', '/catalog/request', {
      query: 'tide tables',
      email: '',
      notes: '',
    });
    expect(plain.status).toBe(200);
    expect(plain.html).toContain('your request is recorded');
    const full = await web.submit('/catalog/request', '/catalog/request', {
      query: 'moon phases',
      email: '  ada@example.test ',
      notes: 'daily',
    });
    expect(full.status).toBe(200);
    expect(await rows()).toEqual([
      { query: 'tide tables', email: null, notes: null },
      { query: 'moon phases', email: 'ada@example.test', notes: 'daily' },
    ]);
  });

  it('refuses a bad email or a one-letter query with the message on the form, and records nothing', async () => {
    const web = new WebClient(f.h.control.url);
    const before = (await rows()).length;
    for (const form of [
      { query: 'weather', email: 'not-an-email', notes: '' },
      { query: 'x', email: '', notes: '' },
    ]) {
      const res = await web.submit('/catalog/request', '/catalog/request', form);
      expect(res.status).toBe(400);
      expect(res.html).toContain('the email must be valid');
    }
    expect(await rows()).toHaveLength(before);
  });
});
