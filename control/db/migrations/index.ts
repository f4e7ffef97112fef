/** Static migration record for kysely's Migrator: numbered files, applied in name order. */
import type { Migration } from 'kysely';
import * as m0001 from './0001_init.js';

export const migrations: Record<string, Migration> = {
  '0001_init': m0001,
};
