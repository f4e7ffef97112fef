/**
 * Control-plane HTTP metrics and the access log: requests by route template (never the raw path, so cardinality
 * stays bounded) and status class, with latency, and one JSON log line per request (at `info`) with its
 * request id, route template and status. The query string is never logged (it may carry codes or tokens).
 */
import type { MiddlewareHandler } from 'hono';
import type { Logger } from '../../core/log.js';
import type { AppEnv } from './http.js';
import { routePath } from 'hono/route';
import { FAST_BUCKETS, counter, histogram } from '../../core/metrics.js';

export function httpMetrics(log: Logger): MiddlewareHandler<AppEnv> {
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
      // After next(), routeIndex is the handler that answered (middleware registered after it also matches).
      const template = routePath(c);
      const route = !template || template === '*' || template === '/*' ? 'unmatched' : template;
      const method = c.req.method;
      const seconds = (performance.now() - started) / 1000;
      requests.inc({ method, route, status_class: `${Math.floor(c.res.status / 100)}xx` });
      duration.observe({ method, route }, seconds);
      log.info('request', {
        request_id: c.get('requestId'),
        method,
        route,
        status: c.res.status,
        ms: Math.round(seconds * 10_000) / 10,
      });
    }
  };
}
