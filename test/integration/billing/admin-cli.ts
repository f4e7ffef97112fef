/** Runs the compiled operator CLI (dist/control/admin/main.js) against a test data dir; output parsed as JSON when it is. */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from '../../helpers/processes.js';

export interface AdminRun {
  code: number;
  stdout: string;
  stderr: string;
  json: any;
}

export function runAdmin(env: Record<string, string>, args: string[]): Promise<AdminRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(ROOT, 'dist/control/admin/main.js'), ...args],
      { env, timeout: 30_000 },
      (err, stdout, stderr) => {
        let json: unknown = null;
        try {
          json = JSON.parse(stdout);
        } catch {
          /* not JSON */
        }
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr, json });
      },
    );
  });
}
