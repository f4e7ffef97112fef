/**
 * The bench's fast upstream: uWS answering every path with one small JSON body over keep-alive.
 * Run as its own process (`node dist/bench/stub-upstream.js`) so it can be pinned; prints a ready line.
 */
import uWS from 'uWebSockets.js';

/** What every request gets; the bench checks each target returns exactly this. */
export const STUB_BODY = '{"ok":true,"service":"bench-stub","items":[1,2,3]}';

function _main(): void {
  const host = process.env.BENCH_HOST ?? '127.0.0.1';
  const port = Number(process.env.BENCH_PORT ?? '0');
  const app = uWS.App();
  app.any('/*', (res) => {
    // The body (if any) is ignored, but uWS needs onAborted set before answering asynchronously; here we answer at once.
    res.cork(() => {
      res.writeStatus('200 OK').writeHeader('Content-Type', 'application/json').end(STUB_BODY);
    });
  });
  app.listen(host, port, (sock) => {
    if (!sock) {
      console.error(`stub-upstream: cannot listen on ${host}:${port}`);
      process.exit(1);
    }
    const bound = uWS.us_socket_local_port(sock);
    console.log(JSON.stringify({ ready: 'stub-upstream', url: `http://${host}:${bound}`, port: bound }));
  });
  const stop = () => process.exit(0);
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

if (import.meta.url === `file://${process.argv[1]}`) _main();
