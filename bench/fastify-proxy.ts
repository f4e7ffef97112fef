/**
 * `@fastify/http-proxy` as the "most used Node proxy" peer (issue 14, item 4): every path proxied to the stub over
 * its default undici keep-alive pool, no logging, no metering. Run as its own process
 * (`BENCH_UPSTREAM=http://… node dist/bench/fastify-proxy.js`) so it can be pinned; prints a ready line.
 */
import proxy from '@fastify/http-proxy';
import Fastify from 'fastify';

async function _main(): Promise<void> {
  const upstream = process.env.BENCH_UPSTREAM;
  if (!upstream) throw new Error('BENCH_UPSTREAM is required');
  const app = Fastify({ logger: false });
  await app.register(proxy, { upstream, prefix: '/', http2: false });
  const addr = await app.listen({ host: '127.0.0.1', port: 0 });
  const port = Number(new URL(addr).port);
  console.log(JSON.stringify({ ready: 'fastify-http-proxy', url: `http://127.0.0.1:${port}`, port }));
  const stop = () => void app.close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

void _main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
