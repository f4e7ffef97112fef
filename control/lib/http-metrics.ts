/**
 * Control-plane HTTP metrics: requests by route template (never the raw path, so cardinality stays bounded) and
 * status class, with latency. Unmatched paths count as `unmatched`.
 */
import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import { FAST_BUCKETS, counter, histogram } from '../../core/metrics.js';

export function httpMetrics(): MiddlewareHandler {
  const requests = counter(
    'svc_http_requests_total',
    'Control-plane HTTP requests by route template and status class',
    ['method', 'route', 'status_class'],
  );
  const duration = histogram(
    'svc_http_request_duration_seconds',
    'Control-plane HTTP request latency by route template',
    [...FAST_BUCKETS],
    ['method', 'route'],
  );
  return async (c, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const template = routePath(c, -1);
      const route = !template || template === '*' || template === '/*' ? 'unmatched' : template;
      const method = c.req.method;
      requests.inc({ method, route, status_class: `${Math.floor(c.res.status / 100)}xx` });
      duration.observe({ method, route }, (performance.now() - started) / 1000);
    }
  };
}
