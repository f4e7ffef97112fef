/**
 * The two Debian tools the bench drives: nginx (nginx-light) and wrk. Installs them with apt-get when
 * missing and running as root; otherwise says how to install them and the caller skips that part.
 */
import { execFileSync, spawnSync } from 'node:child_process';

export interface Tool {
  path: string | null;
  /** Why the tool is missing and how to get it, when `path` is null. */
  note: string | null;
}

function _which(bin: string): string | null {
  const r = spawnSync('sh', ['-c', `command -v ${bin} || { test -x /usr/sbin/${bin} && echo /usr/sbin/${bin}; }`], {
    encoding: 'utf8',
  });
  const p = r.stdout.trim().split('\n')[0];
  return p ? p : null;
}

let _updated = false;

function _aptInstall(pkg: string, log: (s: string) => void): string | null {
  if (process.getuid?.() !== 0) return `not root: run \`sudo apt-get install -y ${pkg}\` and rerun the bench`;
  try {
    if (!_updated) {
      log(`apt-get update (to install ${pkg})`);
      execFileSync('apt-get', ['update', '-qq'], { stdio: 'ignore', timeout: 300_000 });
      _updated = true;
    }
    log(`apt-get install -y ${pkg}`);
    execFileSync('apt-get', ['install', '-y', '-qq', pkg], {
      stdio: 'ignore',
      timeout: 300_000,
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    return null;
  } catch (e) {
    return `apt-get install -y ${pkg} failed (${(e as Error).message.split('\n')[0]}); install it by hand and rerun the bench`;
  }
}

/** `bin` from Debian package `pkg`, installed on demand when possible. */
export function ensureTool(bin: string, pkg: string, log: (s: string) => void): Tool {
  const found = _which(bin);
  if (found) return { path: found, note: null };
  const failure = _aptInstall(pkg, log);
  const path = _which(bin);
  if (path) return { path, note: null };
  return { path: null, note: failure ?? `${bin} still missing after installing ${pkg}` };
}
