import { describe, expect, it } from 'vitest';
import { AggregatorRegistry } from 'prom-client';
import { GatewayMetrics, LISTING_LABELS, ReadGauge } from '../../../gateway/metrics.js';

describe('gateway metrics', () => {
  it('renders counters, histograms and scrape-time gauges in the text format', async () => {
    const m = new GatewayMetrics();
    m.answered('upstream', 200, 'weather', 0.0042);
    m.answered('gateway', 402, 'weather', 0.0003);
    m.charged.inc([], 3);
    m.upstreamErrors.inc(['connection refused']);
    const text = await m.registry([new ReadGauge('svc_gateway_leases_open', 'open leases', () => 7)]).metrics();
    expect(text).toContain('svc_gateway_requests_total{source="upstream",code_class="2xx"} 1');
    expect(text).toContain('svc_gateway_requests_total{source="gateway",code_class="4xx"} 1');
    expect(text).toContain('svc_gateway_refusals_total{status="402"} 1');
    expect(text).toContain('svc_gateway_refusals_total{status="401"} 0');
    expect(text).toContain('svc_gateway_listing_requests_total{listing="weather"} 2');
    expect(text).toContain('svc_gateway_charged_cents_total 3');
    expect(text).toContain('svc_gateway_upstream_errors_total{kind="connection refused"} 1');
    expect(text).toContain('svc_gateway_request_duration_seconds_bucket{le="0.005"} 2');
    expect(text).toContain('svc_gateway_request_duration_seconds_bucket{le="0.0025"} 1');
    expect(text).toContain('svc_gateway_request_duration_seconds_bucket{le="+Inf"} 2');
    expect(text).toContain('svc_gateway_request_duration_seconds_count 2');
    expect(text).toContain('svc_gateway_leases_open 7');
    expect(text).toContain('nodejs_eventloop_lag_seconds');
  });

  it('labels the first listings by slug and the rest as other', async () => {
    const m = new GatewayMetrics();
    for (let i = 0; i < LISTING_LABELS + 5; i++) m.answered('upstream', 200, `api-${i}`, 0.001);
    const text = await m.registry([]).metrics();
    expect(text).toContain('listing="api-0"');
    expect(text).not.toContain(`listing="api-${LISTING_LABELS}"`);
    expect(text).toContain('svc_gateway_listing_requests_total{listing="other"} 5');
  });

  it("sums workers' series into one scrape", async () => {
    const a = new GatewayMetrics();
    const b = new GatewayMetrics();
    a.answered('upstream', 200, 'x', 0.001);
    b.answered('upstream', 200, 'x', 0.002);
    b.charged.inc([], 5);
    const merged = AggregatorRegistry.aggregate([
      await a.registry([]).getMetricsAsJSON(),
      await b.registry([]).getMetricsAsJSON(),
    ]);
    const text = await merged.metrics();
    expect(text).toContain('svc_gateway_requests_total{source="upstream",code_class="2xx"} 2');
    expect(text).toContain('svc_gateway_charged_cents_total 5');
    expect(text).toContain('svc_gateway_request_duration_seconds_count 2');
  });
});
