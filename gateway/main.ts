/**
 * Gateway entry (dist/gateway/main.js). SVC_GATEWAY_WORKERS=1: this process serves. N>1: this process is a
 * supervisor that forks N workers on ONE port (uSockets listens with SO_REUSEPORT, so the kernel spreads
 * connections over the workers) and prints one ready line when all listen. See gateway/README.md.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { orExit } from '../core/config.js';
import { createLogger } from '../core/log.js';
import { onStop } from '../core/lifecycle.js';
import { createRegistry, serveMetrics } from '../core/metrics.js';
import { aggregateWorkers } from './metrics.js';
import { openDatabase } from '../core/db/database.js';
import { migrateToLatest } from '../core/db/migrate.js';
import { loadGatewayConfig, type GatewayConfig } from './config.js';
import { PICKED_PORT_TAKEN_EXIT, runWorker } from './worker.js';
import { serverFor } from './server-choice.js';

/** Failed starts of one worker slot, before anything listened, after which the supervisor gives up. */
const START_ATTEMPTS = 5;

const cfg = orExit(() => loadGatewayConfig());
const workerIndexEnv = process.env.SVC_GATEWAY_WORKER_INDEX;

if (workerIndexEnv !== undefined) {
  await runWorker(cfg, Number(workerIndexEnv), Number(process.env.SVC_GATEWAY_WORKER_PORT ?? cfg.base.ports.gateway));
} else if (cfg.base.gatewayWorkers <= 1) {
  await runWorker(cfg, 0, cfg.base.ports.gateway);
} else {
  await supervise(cfg);
}

// Long: the supervisor's whole life in one place: pick the port, start the workers, restart with backoff, sum metrics,
// stop on a signal.
async function supervise(c: Readonly<GatewayConfig>): Promise<void> {
  const n = c.base.gatewayWorkers;
  const log = createLogger('gateway', c.base.logLevel);
  // A server that cannot run (SVC_GATEWAY_SERVER=native with no build that loads, ...) is refused once, here.
  const server = serverFor(c.server, c.maxHeaderBytes, n);
  if (server instanceof Error) {
    log.error(`refusing to start: ${server.message}`);
    process.exit(1);
  }
  const handles = openDatabase(c.base.dbFile);
  await migrateToLatest(handles.db);
  await handles.close();
  // All workers share one port. uSockets sets SO_REUSEPORT only for a fixed port, so for port 0 the supervisor
  // picks a free port first and hands that to every worker. Another process may take it before the first worker
  // listens: that worker then exits at once (PICKED_PORT_TAKEN_EXIT) and the supervisor picks again.
  const picked = c.base.ports.gateway === 0;
  let sharedPort = picked ? await freePort(c.base.host) : c.base.ports.gateway;
  let url = '';
  const children: (ChildProcess | undefined)[] = new Array<ChildProcess | undefined>(n);
  let stopping = false;
  let announced = false;
  let anyListening = false;
  /** Exits in a row before a worker in this slot got to listen: they set its restart backoff. */
  const exitsBeforeReady = new Array<number>(n).fill(0);

  /** Starts worker i; `onReady` runs once it listens, even if it had to be restarted before that. */
  const spawnWorker = (i: number, onReady?: () => void): void => {
    const firstOnPickedPort = picked && !anyListening;
    const child = fork(fileURLToPath(import.meta.url), [], {
      env: {
        ...process.env,
        SVC_GATEWAY_WORKER_INDEX: String(i),
        SVC_GATEWAY_WORKER_PORT: String(sharedPort),
        SVC_GATEWAY_WORKER_PORT_PICKED: firstOnPickedPort ? '1' : '0',
      },
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    });
    children[i] = child;
    let ready = false;
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const msg = JSON.parse(line) as { ready?: string; url?: string; port?: number };
        if (msg.ready === 'gateway' && msg.url && msg.port) {
          sharedPort = msg.port; // later and restarted workers join the same port
          url = msg.url;
          anyListening = true;
          ready = true;
          onReady?.();
        }
      } catch {
        process.stdout.write(line + '\n');
      }
    });
    child.once('exit', (code, sig) => {
      if (stopping) return;
      const pickAgain = code === PICKED_PORT_TAKEN_EXIT && firstOnPickedPort;
      const early = ready || pickAgain ? 0 : (exitsBeforeReady[i] ?? 0) + 1;
      exitsBeforeReady[i] = early;
      // A worker that cannot even start (bad binary, unusable data dir) would otherwise be restarted forever:
      // at startup that is a failed start, said once; later it is retried with a backoff of up to 10 s.
      if (!announced && early >= START_ATTEMPTS) {
        log.error('worker keeps exiting before it listens; giving up', { worker: i, code, sig, attempts: early });
        process.exit(1);
      }
      log.warn(pickAgain ? 'picked port taken; picking another' : 'worker exited; restarting', {
        worker: i,
        code,
        sig,
      });
      setTimeout(
        () => {
          void (async () => {
            if (stopping) return;
            if (pickAgain) {
              try {
                sharedPort = await freePort(c.base.host);
              } catch (e) {
                log.error('cannot pick a free port', { err: e as Error });
                process.exit(1);
              }
            }
            if (!stopping) spawnWorker(i, ready ? undefined : onReady);
          })();
        },
        pickAgain ? 0 : Math.min(200 * 2 ** Math.max(0, early - 1), 10_000),
      );
    });
  };

  for (let i = 0; i < n; i++) await new Promise<void>((resolve) => spawnWorker(i, resolve));
  // One scrape for the whole gateway: the supervisor sums its workers' series (gateway/metrics.ts).
  const own = createRegistry();
  const metrics = await serveMetrics(
    c.base.metrics,
    'gateway',
    () =>
      aggregateWorkers(
        children.filter((ch): ch is ChildProcess => !!ch && ch.connected),
        own,
      ),
    log,
  );
  if (!announced) {
    announced = true;
    process.stdout.write(
      JSON.stringify({
        ready: 'gateway',
        url,
        port: sharedPort,
        workers: children.map((ch) => ch?.pid),
        metrics_url: metrics?.url,
      }) + '\n',
    );
  }
  const stop = () => {
    if (stopping) return;
    stopping = true;
    const live = children.filter((ch): ch is ChildProcess => !!ch && ch.exitCode === null && ch.signalCode === null);
    let left = live.length;
    if (left === 0) process.exit(0);
    for (const ch of live) {
      ch.once('exit', () => {
        if (--left === 0) process.exit(0);
      });
      ch.kill('SIGTERM');
    }
    setTimeout(() => {
      for (const ch of live) if (ch.exitCode === null && ch.signalCode === null) ch.kill('SIGKILL');
      process.exit(1);
    }, 20_000).unref();
  };
  onStop(stop);
}

function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}
