/**
 * nginx as the reference proxy: one worker, `proxy_pass` to the stub over a keep-alive upstream pool,
 * no access log, run in the foreground as one process (master_process off) so /proc CPU is its own.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import type { Pinned } from './procs.js';
import { stopChild } from './procs.js';

export function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      s.close(() => res(port));
    });
  });
}

function _config(dir: string, port: number, upstreamPort: number): string {
  return `worker_processes 1;
master_process off;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  keepalive_requests 1000000;
  upstream stub { server 127.0.0.1:${upstreamPort}; keepalive 64; }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://stub;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }
}
`;
}

/** Starts nginx pinned to `cpus`; resolves when it accepts connections. */
export async function startNginx(nginxBin: string, dir: string, cpus: string, upstreamPort: number): Promise<Pinned> {
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const conf = join(dir, 'nginx.conf');
  writeFileSync(conf, _config(dir, port, upstreamPort));
  return startListening('nginx', cpus, nginxBin, ['-c', conf, '-p', dir, '-e', join(dir, 'error.log')], port);
}

/**
 * Spawns a server that prints no ready line (nginx, HAProxy) under `taskset`, and resolves once any HTTP answer
 * comes back from `http://127.0.0.1:port/`.
 */
export async function startListening(
  name: string,
  cpus: string,
  bin: string,
  args: string[],
  port: number,
): Promise<Pinned> {
  const child = spawn('taskset', ['-c', cpus, bin, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (d: string) => (err += d));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}): ${err}`);
    try {
      await fetch(url + '/');
      return { name, pid: child.pid!, url, port, child, stderr: () => err, stop: () => stopChild(child) };
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  await stopChild(child);
  throw new Error(`${name} did not accept connections on ${url}: ${err}`);
}
