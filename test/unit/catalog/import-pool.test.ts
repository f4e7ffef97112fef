import { afterAll, describe, expect, it } from 'vitest';
import { ImportPool } from '../../../control/catalog/import-pool.js';
import { holdDocument, smallOpenApi } from '../../helpers/catalog.js';

// Runs the compiled worker (dist/control/catalog/import-worker.js): build before running.
const pool = new ImportPool({ workers: 1, queue: 1 });
afterAll(() => pool.close());

describe('ImportPool', () => {
  it('imports in a worker thread and reports the worker heap', async () => {
    const { api, stats } = await pool.run({ kind: 'body', body: smallOpenApi('Pooled') });
    expect(api.title).toBe('Pooled');
    expect(api.endpoints.length).toBeGreaterThan(0);
    expect(stats.heap_peak_bytes).toBeGreaterThan(0);
  });

  it('passes the import error through with its code', async () => {
    await expect(pool.run({ kind: 'body', body: { hello: 'world' } })).rejects.toMatchObject({
      code: 'import_failed',
    });
  });

  it('answers busy with Retry-After when every worker runs and the queue is full, and recovers', async () => {
    const held = await holdDocument();
    const url = `${held.url}/doc.json`;
    const first = pool.run({ kind: 'url', url, production: false, marketplaceExport: false });
    await held.arrived; // the only worker is now inside the first import
    const second = pool.run({ kind: 'body', body: smallOpenApi('Queued') });
    expect(pool.queued).toBe(1);
    await expect(pool.run({ kind: 'body', body: smallOpenApi('Refused') })).rejects.toMatchObject({
      code: 'busy',
      retryAfter: expect.any(Number),
    });
    held.release(smallOpenApi('Held'));
    expect((await first).api.title).toBe('Held');
    expect((await second).api.title).toBe('Queued');
    await held.close();
  });
});
