/** Request handler of the demo upstream API: deterministic weather and sentiment answers behind a bearer secret. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { DEMO_UPSTREAM_SECRET } from './demo-api.js';

const CITIES = [
  { city: 'lisbon', country: 'PT', lat: 38.72, lon: -9.14 },
  { city: 'paris', country: 'FR', lat: 48.86, lon: 2.35 },
  { city: 'tokyo', country: 'JP', lat: 35.68, lon: 139.69 },
  { city: 'lagos', country: 'NG', lat: 6.52, lon: 3.38 },
  { city: 'lima', country: 'PE', lat: -12.05, lon: -77.04 },
  { city: 'oslo', country: 'NO', lat: 59.91, lon: 10.75 },
];
const CONDITIONS = ['sunny', 'cloudy', 'rain', 'windy', 'snow'];
const POSITIVE = ['good', 'great', 'love', 'excellent', 'happy', 'nice', 'fast'];
const NEGATIVE = ['bad', 'awful', 'hate', 'terrible', 'sad', 'slow', 'broken'];

/** Same city + day offset always gives the same weather: a stable demo, easy to assert on. */
function weather(city: string, day: number): { temp_c: number; condition: string } {
  let h = day * 31;
  for (const ch of city) h = (h * 33 + ch.charCodeAt(0)) % 100_003;
  return { temp_c: (h % 35) - 5, condition: CONDITIONS[h % CONDITIONS.length]! };
}

export function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  // HEAD gets GET's status and headers without the body (RFC 9110 9.3.2); node drops the body for HEAD itself.
  res.end(text);
}

async function readBody(req: IncomingMessage, max = 64 * 1024): Promise<string> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > max) throw new Error('body too large');
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://demo.local');
  if (url.pathname === '/health') return send(res, 200, { ok: true });
  if (req.headers.authorization !== `Bearer ${DEMO_UPSTREAM_SECRET}`)
    return send(res, 401, { error: 'missing or wrong bearer token' });
  const city = (url.searchParams.get('city') ?? '').toLowerCase();
  const isGet = req.method === 'GET' || req.method === 'HEAD';
  if (isGet && url.pathname === '/cities') return send(res, 200, { cities: CITIES });
  const m = /^\/cities\/([^/]+)$/.exec(url.pathname);
  if (isGet && m) {
    const c = CITIES.find((x) => x.city === decodeURIComponent(m[1]!).toLowerCase());
    return c ? send(res, 200, c) : send(res, 404, { error: 'unknown city' });
  }
  if (isGet && (url.pathname === '/current' || url.pathname === '/forecast')) {
    if (!city) return send(res, 400, { error: 'query parameter city is required' });
    if (url.pathname === '/current') return send(res, 200, { city, ...weather(city, 0) });
    const days = Math.min(7, Math.max(1, Number.parseInt(url.searchParams.get('days') ?? '3', 10) || 3));
    return send(res, 200, {
      city,
      days: Array.from({ length: days }, (_, i) => ({ day: i + 1, ...weather(city, i + 1) })),
    });
  }
  if (req.method === 'POST' && url.pathname === '/sentiment') {
    let text = '';
    try {
      text = String((JSON.parse(await readBody(req)) as { text?: unknown }).text ?? '');
    } catch {
      return send(res, 400, { error: 'body must be JSON {"text": "..."}' });
    }
    const words = text.toLowerCase().split(/[^a-z]+/);
    const score = words.filter((w) => POSITIVE.includes(w)).length - words.filter((w) => NEGATIVE.includes(w)).length;
    return send(res, 200, { score, label: score > 0 ? 'positive' : score < 0 ? 'negative' : 'neutral' });
  }
  return send(res, 404, { error: 'no such endpoint' });
}
