/** The 32-byte key for upstream secrets at rest (AES-256-GCM), shared by the control plane and gateway workers. */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Config } from './config.js';

/** SVC_SECRET_KEY, else a key generated once into the data dir (mode 0600). */
export function loadSecretKey(config: Readonly<Config>): Buffer {
  if (config.secretKeyHex) return Buffer.from(config.secretKeyHex, 'hex');
  const file = join(config.dataDir, 'secret.key');
  if (!existsSync(file)) {
    mkdirSync(config.dataDir, { recursive: true });
    try {
      writeFileSync(file, randomBytes(32).toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
    } catch (e) {
      // Another process created it first: use theirs.
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
  const hex = readFileSync(file, 'utf8').trim();
  if (!/^[0-9a-f]{64}$/i.test(hex)) throw new Error(`${file} is not a 64-hex-character key`);
  return Buffer.from(hex, 'hex');
}
