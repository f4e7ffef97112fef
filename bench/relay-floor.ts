/**
 * The relay floors (issue 28's CPU targets): what the design's parts cost per proxied call with no svc logic at all.
 * - `relay`: a uWS server that relays each request's method and path to the stub over a pool of keep-alive `net`
 *   sockets (one request per socket at a time, the request written as one string, the answer's head scanned only
 *   for `Content-Length`), and answers the stub's status, content type and body. No auth, no listing, no metrics,
 *   no header relay, no size caps, no timeouts: the least a Node + uWS proxy can do per call. Pass-through is judged
 *   against it.
 * - `metered` (`BENCH_RELAY_COMMIT=<file>`): the same relay plus the two things a metered call cannot skip, the key's
 *   SHA-256 and one row per call committed before the answer: rows are group-committed once per event-loop turn, or
 *   two while calls are in flight, as the gateway batches (one transaction, one prepared INSERT per row), on a SQLite
 *   file opened as every svc process opens it, with the gateway's checkpoint thread and writer settings (as
 *   bench/commit-floor.ts). No money logic, no usage projections: the paid path is judged against it.
 * - `spin` (`BENCH_RELAY_SPIN_US=<µs>`): the bare relay plus that much busy user-space CPU per request: an integer
 *   loop of a count calibrated at start (no clock read, system call or allocation per request). What it costs beyond
 *   the spin is what a µs of a server's own code weighs at saturation on this machine.
 * `node dist/bench/relay-floor.js` with BENCH_UPSTREAM=<stub URL>; prints a ready line like the stub.
 */
import { createHash } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import uWS from 'uWebSockets.js';
import type Sqlite from 'better-sqlite3';
import { openFloorDb } from './commit-floor.js';

interface Answer {
  status: string;
  contentType: string;
  body: Buffer;
}

const HEAD_END = Buffer.from('\r\n\r\n');

/** One keep-alive upstream socket carrying one request at a time; `ask` resolves with the parsed answer. */
class UpstreamSocket {
  readonly #sock: Socket;
  #buf: Buffer = Buffer.alloc(0);
  #done: ((a: Answer | null) => void) | null = null;
  alive = true;

  constructor(host: string, port: number) {
    this.#sock = connect({ host, port, noDelay: true });
    this.#sock.on('data', (d: Buffer) => this.#read(d));
    const dead = () => {
      this.alive = false;
      this.#done?.(null);
      this.#done = null;
    };
    this.#sock.on('error', dead);
    this.#sock.on('close', dead);
  }

  ask(request: string, done: (a: Answer | null) => void): void {
    this.#done = done;
    this.#sock.write(request);
  }

  #read(d: Buffer): void {
    this.#buf = this.#buf.length === 0 ? d : Buffer.concat([this.#buf, d]);
    const end = this.#buf.indexOf(HEAD_END);
    if (end < 0) return;
    const head = this.#buf.toString('latin1', 0, end);
    const len = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? '0');
    if (this.#buf.length < end + 4 + len) return;
    const body = this.#buf.subarray(end + 4, end + 4 + len);
    const contentType = /\r\ncontent-type: *([^\r]*)/i.exec(head)?.[1] ?? 'application/octet-stream';
    const status = head.slice(9, head.indexOf('\r\n'));
    this.#buf = this.#buf.subarray(end + 4 + len);
    const done = this.#done;
    this.#done = null;
    done?.({ status, contentType, body });
  }
}

/** Rows of one event-loop turn, committed together; each answer waits for its row's COMMIT. */
class GroupCommit {
  #queue: { keyHash: string; path: string; status: number; then: () => void }[] = [];
  #scheduled = false;
  readonly #insert: Sqlite.Statement;

  /** `inFlight`: the relay's calls in flight (answered calls excluded). */
  constructor(
    private readonly db: Sqlite.Database,
    private readonly inFlight: () => number,
  ) {
    db.exec(
      'create table if not exists floor_calls (id integer primary key, key_hash text not null, path text not null, status integer not null, charged_cents integer not null, at_ms integer not null)',
    );
    this.#insert = db.prepare(
      'insert into floor_calls (key_hash, path, status, charged_cents, at_ms) values (?, ?, ?, ?, ?)',
    );
  }

  add(keyHash: string, path: string, status: number, then: () => void): void {
    this.#queue.push({ keyHash, path, status, then });
    if (this.#scheduled) return;
    this.#scheduled = true;
    // While calls in flight have not reached the queue, the batch waits one more turn for them, as the gateway's
    // settle writer does (gateway/settle-writer.ts `#turn`): the floor batches as the gateway does.
    setImmediate(() => {
      if (this.inFlight() > this.#queue.length) setImmediate(() => this.#commit());
      else this.#commit();
    });
  }

  #commit(): void {
    this.#scheduled = false;
    const q = this.#queue;
    this.#queue = [];
    const now = Date.now();
    this.db.exec('BEGIN IMMEDIATE');
    for (const r of q) this.#insert.run(r.keyHash, r.path, r.status, 1, now);
    this.db.exec('COMMIT');
    for (const r of q) r.then();
  }
}

/** Where the spin's result goes, so the loop cannot be optimized away. */
let spinSink = 0;

function spin(loops: number): void {
  let x = spinSink;
  for (let i = 0; i < loops; i++) x = (Math.imul(x, 1103515245) + 12345) | 0;
  spinSink = x;
}

/** Loops per `us` µs: the fastest of several 20 ms trials (a trial the VM preempted reads slow). */
function spinLoopsFor(us: number): number {
  if (!(us > 0)) return 0;
  const trial = 2_000_000;
  spin(trial); // optimized before it is timed
  let best = Number.POSITIVE_INFINITY;
  for (let t = 0; t < 7; t++) {
    const start = process.hrtime.bigint();
    spin(trial);
    best = Math.min(best, Number(process.hrtime.bigint() - start));
  }
  return Math.round((trial / best) * us * 1000);
}

function _main(): void {
  const upstream = new URL(process.env.BENCH_UPSTREAM ?? '');
  const host = upstream.hostname;
  const port = Number(upstream.port);
  const file = process.env.BENCH_RELAY_COMMIT;
  let inFlight = 0;
  const commits = file ? new GroupCommit(openFloorDb(file), () => inFlight) : null;
  const spinLoops = spinLoopsFor(Number(process.env.BENCH_RELAY_SPIN_US ?? 0));
  const idle: UpstreamSocket[] = [];
  const app = uWS.App();
  app.any('/*', (res, req) => {
    if (spinLoops > 0) spin(spinLoops);
    const method = req.getMethod().toUpperCase();
    const q = req.getQuery();
    const path = q ? `${req.getUrl()}?${q}` : req.getUrl();
    const keyHash = commits ? createHash('sha256').update(req.getHeader('authorization')).digest('hex') : '';
    let aborted = false;
    inFlight++;
    res.onAborted(() => {
      aborted = true;
      inFlight--;
    });
    let sock = idle.pop();
    while (sock && !sock.alive) sock = idle.pop();
    const s = sock ?? new UpstreamSocket(host, port);
    s.ask(`${method} ${path} HTTP/1.1\r\nhost: ${upstream.host}\r\n\r\n`, (a) => {
      if (s.alive) idle.push(s);
      const answer = () => {
        if (aborted) return;
        inFlight--;
        res.cork(() => {
          if (!a) res.writeStatus('502 Bad Gateway').end();
          else res.writeStatus(a.status).writeHeader('content-type', a.contentType).end(a.body);
        });
      };
      if (commits && a) commits.add(keyHash, path, Number(a.status.slice(0, 3)), answer);
      else answer();
    });
  });
  app.listen('127.0.0.1', 0, (listen) => {
    if (!listen) {
      console.error('relay-floor: cannot listen');
      process.exit(1);
    }
    const bound = uWS.us_socket_local_port(listen);
    console.log(JSON.stringify({ ready: 'relay-floor', url: `http://127.0.0.1:${bound}`, port: bound }));
  });
  const stop = () => process.exit(0);
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

if (import.meta.url === `file://${process.argv[1]}`) _main();
