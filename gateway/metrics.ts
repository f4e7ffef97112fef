/**
 * Gateway metrics (docs/gateway.md "Metrics"). The paid path is measured in microseconds, and prom-client's own
 * counters and histograms cost 0.4-2 µs per update (measured: bench/RESULTS.md), so a call here only bumps plain
 * numbers — a Map lookup and an add, a bucket scan over 13 bounds — and prom-client reads them at scrape time
 * through metric objects that implement its `get()`. With several workers, the supervisor asks each for its JSON
 * and sums them (prom-client's AggregatorRegistry.aggregate), so one scrape covers the whole gateway.
 */
import { statSync } from 'node:fs';
import { AggregatorRegistry, type Registry } from 'prom-client';
import { FAST_BUCKETS, REMOTE_BUCKETS, createRegistry } from '../core/metrics.js';
import type { SettleRecord } from './settle-writer.js';

type Labels = Record<string, string | number>;

/** What prom-client's registry reads from a metric's `get()` to render and aggregate it. */
interface Scraped {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  aggregator: 'sum' | 'max';
  values: { labels: Labels; value: number; metricName?: string }[];
}

/** The part of prom-client's metric interface a registry needs to render and aggregate a metric. */
export interface ScrapedMetric {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  aggregator: 'sum' | 'max';
  get(): Promise<Scraped>;
}

/** A counter keyed by a fixed list of label values; `inc` is one Map lookup. */
export class FastCounter implements ScrapedMetric {
  readonly type = 'counter';
  readonly aggregator = 'sum';
  readonly #series = new Map<string, { labels: Labels; value: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly string[] = [],
  ) {}

  inc(values: readonly string[] = [], by = 1): void {
    const key = values.join('\u0000');
    const s = this.#series.get(key);
    if (s) s.value += by;
    else {
      const labels: Labels = {};
      this.labelNames.forEach((n, i) => {
        labels[n] = values[i] ?? '';
      });
      this.#series.set(key, { labels, value: by });
    }
  }

  /** Creates series at 0, so rates exist before the first event. */
  zero(values: readonly string[]): void {
    this.inc(values, 0);
  }

  get(): Promise<Scraped> {
    const values = [...this.#series.values()].map((s) => ({ labels: { ...s.labels }, value: s.value }));
    if (this.labelNames.length === 0 && values.length === 0) values.push({ labels: {}, value: 0 });
    return Promise.resolve({ name: this.name, help: this.help, type: 'counter', aggregator: 'sum', values });
  }
}

/** An unlabelled histogram over fixed bounds (seconds). */
export class FastHistogram implements ScrapedMetric {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly #counts: Float64Array;
  #sum = 0;
  #count = 0;
  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
  ) {
    this.#counts = new Float64Array(bounds.length);
  }

  observe(seconds: number): void {
    this.#sum += seconds;
    this.#count++;
    const b = this.bounds;
    for (let i = 0; i < b.length; i++)
      if (seconds <= b[i]!) {
        this.#counts[i]!++;
        return;
      }
  }

  get(): Promise<Scraped> {
    const values: { labels: Labels; value: number; metricName: string }[] = [];
    let acc = 0;
    this.bounds.forEach((le, i) => {
      acc += this.#counts[i]!;
      values.push({ labels: { le }, value: acc, metricName: `${this.name}_bucket` });
    });
    values.push({ labels: { le: '+Inf' }, value: this.#count, metricName: `${this.name}_bucket` });
    values.push({ labels: {}, value: this.#sum, metricName: `${this.name}_sum` });
    values.push({ labels: {}, value: this.#count, metricName: `${this.name}_count` });
    return Promise.resolve({ name: this.name, help: this.help, type: 'histogram', aggregator: 'sum', values });
  }
}

/** A gauge read at scrape time. `max` aggregates across workers where a sum means nothing (WAL size, lag). */
export class ReadGauge implements ScrapedMetric {
  readonly type = 'gauge';
  constructor(
    readonly name: string,
    readonly help: string,
    private readonly read: () => number,
    readonly aggregator: 'sum' | 'max' = 'sum',
  ) {}
  get(): Promise<Scraped> {
    return Promise.resolve({
      name: this.name,
      help: this.help,
      type: 'gauge',
      aggregator: this.aggregator,
      values: [{ labels: {}, value: this.read() }],
    });
  }
}

/** A counter whose labelled values are read at scrape time from numbers another object keeps (cache hits). */
export class ReadCounter implements ScrapedMetric {
  readonly type = 'counter';
  readonly aggregator = 'sum';
  constructor(
    readonly name: string,
    readonly help: string,
    private readonly read: () => { labels: Labels; value: number }[],
  ) {}
  get(): Promise<Scraped> {
    return Promise.resolve({
      name: this.name,
      help: this.help,
      type: 'counter',
      aggregator: 'sum',
      values: this.read(),
    });
  }
}

/** Listings labelled by slug before the rest count as `other` (bounded cardinality). */
export const LISTING_LABELS = 50;
const REFUSAL_STATUSES = ['401', '402', '403', '428', '429'] as const;
export const UPSTREAM_ERROR_KINDS = [
  'connection refused',
  'connection reset',
  'invalid HTTP answer',
  'host not found',
  'TLS handshake failed',
  'network error',
  'timeout',
  'egress refused',
] as const;

/** What the gateway counts; one instance per worker. */
export class GatewayMetrics {
  readonly requests = new FastCounter(
    'svc_gateway_requests_total',
    "Gateway answers by who answered (the upstream's status relayed, or the gateway's own) and status class",
    ['source', 'code_class'],
  );
  readonly listingRequests = new FastCounter(
    'svc_gateway_listing_requests_total',
    `Gateway calls by listing (the first ${LISTING_LABELS} listings seen by slug, the rest as "other")`,
    ['listing'],
  );
  readonly refusals = new FastCounter('svc_gateway_refusals_total', 'Calls refused by the gateway, by status', [
    'status',
  ]);
  readonly upstreamErrors = new FastCounter(
    'svc_gateway_upstream_errors_total',
    'Calls whose upstream could not be reached or answered badly, by kind (never charged)',
    ['kind'],
  );
  readonly charged = new FastCounter('svc_gateway_charged_cents_total', 'Cents charged for answered paid calls');
  readonly refunded = new FastCounter(
    'svc_gateway_refunded_cents_total',
    'Cents reserved for paid calls that failed and were not charged',
  );
  readonly priced = new FastCounter(
    'svc_gateway_priced_requests_total',
    'Calls to endpoints with a price above 0, whatever their outcome',
  );
  readonly duration = new FastHistogram(
    'svc_gateway_request_duration_seconds',
    'Time from request to the end of the answer',
    [...FAST_BUCKETS, 5, 10, 30],
  );
  readonly upstreamDuration = new FastHistogram(
    'svc_gateway_upstream_duration_seconds',
    'Time from forwarding to the upstream answer headers',
    REMOTE_BUCKETS,
  );
  readonly settleCommit = new FastHistogram(
    'svc_gateway_settle_commit_seconds',
    'Time one settle batch (group commit) took to commit',
    FAST_BUCKETS,
  );
  readonly checkpoint = new FastHistogram(
    'svc_gateway_checkpoint_seconds',
    'Duration of WAL checkpoints',
    FAST_BUCKETS,
  );
  #listings = 0;
  readonly #listingLabel = new Map<string, string>();

  constructor() {
    for (const s of REFUSAL_STATUSES) this.refusals.zero([s]);
    for (const k of UPSTREAM_ERROR_KINDS) this.upstreamErrors.zero([k]);
    for (const source of ['gateway', 'upstream'])
      for (const c of ['2xx', '3xx', '4xx', '5xx']) this.requests.zero([source, c]);
  }

  /** One finished call: who answered, its status, its listing slug (null before one was resolved), its time. */
  answered(source: 'gateway' | 'upstream', status: number, slug: string | null, seconds: number): void {
    this.requests.inc([source, CLASS[Math.floor(status / 100)] ?? '5xx']);
    this.duration.observe(seconds);
    if (slug !== null) this.listingRequests.inc([this.#label(slug)]);
    if (
      source === 'gateway' &&
      (status === 401 || status === 402 || status === 403 || status === 428 || status === 429)
    )
      this.refusals.inc([String(status)]);
  }

  #label(slug: string): string {
    let l = this.#listingLabel.get(slug);
    if (l === undefined) {
      l = this.#listings < LISTING_LABELS ? slug : 'other';
      if (l !== 'other') this.#listings++;
      // Remember up to a bound, so a flood of unknown slugs cannot grow the map without end.
      if (this.#listingLabel.size < 10_000) this.#listingLabel.set(slug, l);
    }
    return l;
  }

  /** Registers every metric (and the scrape-time gauges) in a registry with Node's default metrics. */
  registry(gauges: ScrapedMetric[]): Registry {
    const r = createRegistry();
    for (const m of [
      this.requests,
      this.listingRequests,
      this.refusals,
      this.upstreamErrors,
      this.charged,
      this.refunded,
      this.priced,
      this.duration,
      this.upstreamDuration,
      this.settleCommit,
      this.checkpoint,
      ...gauges,
    ])
      r.registerMetric(m as never);
    return r;
  }

  /** One committed settle, on either store: priced calls, cents charged or refunded, the upstream's time. */
  settled(r: Pick<SettleRecord, 'priceCents' | 'chargedCents' | 'latencyMs'>): void {
    if (r.priceCents > 0) {
      this.priced.inc();
      if (r.chargedCents > 0) this.charged.inc([], r.chargedCents);
      else this.refunded.inc([], r.priceCents);
    }
    this.upstreamDuration.observe(r.latencyMs / 1000);
  }
}

const CLASS: Record<number, string> = { 1: '1xx', 2: '2xx', 3: '3xx', 4: '4xx', 5: '5xx' };

/** Bytes in the SQLite WAL beside `dbFile` (0 when there is none). */
export function walBytes(dbFile: string): number {
  try {
    return statSync(`${dbFile}-wal`).size;
  } catch {
    return 0;
  }
}

interface MetricsAsk {
  svcMetrics: 'ask';
  id: number;
}
interface MetricsAnswer {
  svcMetrics: 'answer';
  id: number;
  data: unknown[];
}

/** A supervised worker answers its supervisor's metrics requests over the IPC channel. */
export function answerMetricsRequests(registry: Registry): void {
  process.on('message', (m: unknown) => {
    if (typeof m !== 'object' || m === null || (m as MetricsAsk).svcMetrics !== 'ask') return;
    const id = (m as MetricsAsk).id;
    void registry
      .getMetricsAsJSON()
      .then((data) => process.send?.({ svcMetrics: 'answer', id, data } satisfies MetricsAnswer));
  });
}

/**
 * The supervisor's scrape: asks every live worker for its series (bounded wait; a worker that does not answer in
 * time is left out of that scrape) and sums them.
 */
export async function aggregateWorkers(
  workers: readonly {
    send(m: MetricsAsk): boolean;
    on(e: 'message', f: (m: unknown) => void): unknown;
    off(e: 'message', f: (m: unknown) => void): unknown;
  }[],
  own: Registry,
  timeoutMs = 2000,
): Promise<{ contentType: string; body: string }> {
  const id = Math.floor(Math.random() * 2 ** 31);
  const answers = await Promise.all(
    workers.map(
      (w) =>
        new Promise<unknown[] | null>((resolve) => {
          const timer = setTimeout(() => done(null), timeoutMs);
          const onMessage = (m: unknown) => {
            const a = m as MetricsAnswer;
            if (typeof m === 'object' && m !== null && a.svcMetrics === 'answer' && a.id === id) done(a.data);
          };
          const done = (v: unknown[] | null) => {
            clearTimeout(timer);
            w.off('message', onMessage);
            resolve(v);
          };
          w.on('message', onMessage);
          try {
            w.send({ svcMetrics: 'ask', id });
          } catch {
            done(null);
          }
        }),
    ),
  );
  const merged = AggregatorRegistry.aggregate([
    ...answers.filter((a): a is unknown[] => a !== null),
    await own.getMetricsAsJSON(),
  ] as never);
  return { contentType: merged.contentType, body: await merged.metrics() };
}
