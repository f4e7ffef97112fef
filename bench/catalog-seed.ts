/** The catalog bench's data: live listings over ten words and eight categories, with endpoints and usage stats. */
import { openDatabase } from '../core/db/database.js';
import { migrateToLatest } from '../core/db/migrate.js';
import { newId } from '../core/ids.js';

const WORDS = ['weather', 'translate', 'geocode', 'payments', 'email', 'images', 'search', 'stocks', 'news', 'sms'];
const CATEGORIES = ['data', 'finance', 'media', 'messaging', 'ai', 'maps', 'devtools', 'other'];

/** Seeds `listings` live listings (4 endpoints each, 30-day stats rows) into a fresh database file. */
export async function seedCatalog(file: string, listings: number): Promise<void> {
  const h = openDatabase(file);
  await migrateToLatest(h.db);
  const now = Date.now();
  const org = newId('org');
  h.sqlite
    .prepare(
      `INSERT INTO orgs (id, name, origin, email, email_verified_at, created_at) VALUES (?, ?, 'login', ?, ?, ?)`,
    )
    .run(org, 'bench provider', 'bench@example.com', now, now);
  const api = h.sqlite.prepare(
    `INSERT INTO apis (id, org_id, slug, name, summary, description, category, tags, base_url, status, source_kind,
       injection, published_at, publish_terms_accepted_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'http://127.0.0.1:9', 'live', 'body', 'none', ?, ?, ?, ?)`,
  );
  const ep = h.sqlite.prepare(
    `INSERT INTO endpoints (id, api_id, method, path, price_cents, discounts_json, position, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, '[]', ?, ?, ?)`,
  );
  const stats = h.sqlite.prepare(
    `INSERT INTO api_stats (api_id, calls_30d, success_30d, orgs_30d, gross_30d_cents, computed_at) VALUES (?, ?, ?, ?, ?, ?)`,
  );
  h.sqlite.transaction(() => {
    for (let i = 0; i < listings; i++) {
      const a = WORDS[i % WORDS.length]!;
      const b = WORDS[(i * 7 + 3) % WORDS.length]!;
      const id = newId('api', now + i);
      api.run(
        id,
        org,
        `bench-${i}`,
        `${a} ${b} api ${i}`,
        `A ${a} service with ${b} extras, number ${i}.`,
        `Longer description of the ${a} API ${i}: endpoints for ${b} and more.`,
        CATEGORIES[i % CATEGORIES.length]!,
        JSON.stringify([a, b]),
        now - i * 1000,
        now,
        now,
        now,
      );
      for (let e = 0; e < 4; e++)
        ep.run(newId('ep', now + i), id, e % 2 ? 'POST' : 'GET', `/${a}/${e}`, (i + e) % 5, e, now, now);
      const calls = (i * 37) % 2000;
      stats.run(id, calls, Math.floor(calls * 0.97), calls % 50, calls * 2, now);
    }
  })();
  await h.close();
}
