/**
 * Prometheus metrics (docs/operations.md "Metrics"): one prom-client registry per process, served in the text
 * exposition format on a listener of its own, bound to loopback by default (SVC_METRICS_HOST), never on the public
 * port. Control listens on SVC_METRICS_PORT (9464), the gateway on +1, MCP on +2; 0 picks a free port each.
 *
 * Hot paths do not call prom-client per event: they bump plain numbers, and a collector copies them into the
 * registry at scrape time (`onScrape`), so a scrape costs the work and a call does not.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Logger } from './log.js';

export type MetricsProcess = 'control' | 'gateway' | 'mcp';
const OFFSET: Record<MetricsProcess, number> = { control: 0, gateway: 1, mcp: 2 };

export interface MetricsConfig {
  enabled: boolean;
  host: string;
  /** Control's port; the gateway's is +1 and MCP's +2. 0: every process picks a free port. */
  port: number;
}

/** Latency buckets (seconds) for answers served from memory or one SQLite commit: 100 µs to 2.5 s. */
export const FAST_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 2.5];
/** For calls that wait on another server (an upstream, Stripe, a webhook receiver): 1 ms to 30 s. */
export const REMOTE_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export function createRegistry(): Registry {
  const registry = new Registry();
  // process_* and nodejs_* (CPU, memory, event-loop delay, GC): the standard names every Node dashboard knows.
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 20 });
  return registry;
}

export interface MetricsListener {
  url: string;
  close(): Promise<void>;
}

/**
 * Serves `GET /metrics` for `render` on the process's metrics port. A port that cannot be bound is logged and the
 * process runs on without metrics: a scrape endpoint must never be the reason svc does not start.
 */
export async function serveMetrics(
  cfg: MetricsConfig,
  proc: MetricsProcess,
  render: () => Promise<{ contentType: string; body: string }>,
  log: Logger,
): Promise<MetricsListener | undefined> {
  if (!cfg.enabled) return undefined;
  const server: Server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('metrics are at /metrics\n');
      return;
    }
    render().then(
      ({ contentType, body }) => res.writeHead(200, { 'content-type': contentType }).end(body),
      (e: unknown) => {
        log.error('metrics scrape failed', { err: e instanceof Error ? e : String(e) });
        res.writeHead(500, { 'content-type': 'text/plain' }).end('scrape failed\n');
      },
    );
  });
  const port = cfg.port === 0 ? 0 : cfg.port + OFFSET[proc];
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, cfg.host, () => resolve());
    });
  } catch (e) {
    log.error('metrics listener could not bind; running without metrics', {
      host: cfg.host,
      port,
      err: e instanceof Error ? e : String(e),
    });
    return undefined;
  }
  server.unref();
  const bound = (server.address() as AddressInfo).port;
  const host = cfg.host === '0.0.0.0' ? '127.0.0.1' : cfg.host;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}/metrics`,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** `render` for a plain registry. */
export function registryRenderer(registry: Registry): () => Promise<{ contentType: string; body: string }> {
  return async () => ({ contentType: registry.contentType, body: await registry.metrics() });
}

let shared: Registry | undefined;
/** This process's registry, made on first use (the CLI and short-lived tools never pay for it). */
export function processRegistry(): Registry {
  shared ??= createRegistry();
  return shared;
}

/** Gets or makes a counter in this process's registry (modules declare what they count where they count it). */
export function counter<L extends string = never>(
  name: string,
  help: string,
  labelNames: readonly L[] = [],
): Counter<L> {
  const r = processRegistry();
  return (r.getSingleMetric(name) as Counter<L> | undefined) ?? new Counter({ name, help, labelNames, registers: [r] });
}

export function gauge<L extends string = never>(
  name: string,
  help: string,
  labelNames: readonly L[] = [],
  collect?: (this: Gauge<L>) => void | Promise<void>,
): Gauge<L> {
  const r = processRegistry();
  return (
    (r.getSingleMetric(name) as Gauge<L> | undefined) ??
    new Gauge({ name, help, labelNames, registers: [r], ...(collect ? { collect } : {}) })
  );
}

export function histogram<L extends string = never>(
  name: string,
  help: string,
  buckets: number[],
  labelNames: readonly L[] = [],
): Histogram<L> {
  const r = processRegistry();
  return (
    (r.getSingleMetric(name) as Histogram<L> | undefined) ??
    new Histogram({ name, help, labelNames, buckets, registers: [r] })
  );
}
