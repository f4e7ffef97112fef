/** `svc-admin ledger check`: verifies the books (control/ledger/README.md); prints JSON, exits 1 on any mismatch. */
import { defineCommand } from 'citty';
import { loadConfigOrExit } from '../../config.js';
import { openDatabase } from '../../db/database.js';
import { migrateToLatest } from '../../db/migrate.js';
import { checkBooks } from '../../ledger/books.service.js';

const check = defineCommand({
  meta: { name: 'check', description: 'Check that every balance equals its ledger entries and provider payouts are booked' },
  async run() {
    const config = loadConfigOrExit();
    const handles = openDatabase(config.dbFile);
    try {
      await migrateToLatest(handles.db);
      const report = await checkBooks(handles.db);
      process.stdout.write(JSON.stringify(report, null, 2) + '\n');
      if (!report.ok) process.exitCode = 1;
    } finally {
      await handles.close();
    }
  },
});

export const ledgerCommand = defineCommand({
  meta: { name: 'ledger', description: 'Ledger operations' },
  subCommands: { check },
});
