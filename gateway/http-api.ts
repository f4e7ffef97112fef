/**
 * The part of the uWebSockets.js API the gateway uses (server.ts, respond.ts, request-body.ts), as an interface both
 * servers implement: a native uWS build (server-choice.ts loads one) and the JavaScript fallback (http-fallback.ts).
 * Nothing outside these files may use more of uWS than this, or the fallback stops being a drop-in.
 */
import type * as Uws from 'uWebSockets.js';

export interface HttpRequest {
  /** Lowercase in uWS v20 ('get'); callers upper-case it. */
  getMethod(): string;
  /** Path without the query, raw (not percent-decoded). */
  getUrl(): string;
  /** What follows '?', without it; undefined when the target has no '?'. */
  getQuery(): string | undefined;
  /** Every header line in order, names lowercased, values decoded as UTF-8. */
  forEach(cb: (key: string, value: string) => void): void;
}

export interface HttpResponse {
  cork(cb: () => void): HttpResponse;
  writeStatus(status: string): HttpResponse;
  writeHeader(key: string, value: string): HttpResponse;
  write(chunk: string | Uint8Array): boolean;
  end(body?: string | Uint8Array, closeConnection?: boolean): HttpResponse;
  endWithoutBody(reportedContentLength?: number, closeConnection?: boolean): HttpResponse;
  onWritable(handler: (offset: number) => boolean): HttpResponse;
  onAborted(handler: () => void): HttpResponse;
  /** The ArrayBuffer is only valid during the callback. */
  onData(handler: (chunk: ArrayBuffer, isLast: boolean) => void): HttpResponse;
  pause(): void;
  resume(): void;
  close(): HttpResponse;
}

export type RouteHandler = (res: HttpResponse, req: HttpRequest) => void;

/** Opaque: only ever handed back to the module that made it. */
export type ListenSocket = object;

export interface HttpApp {
  get(pattern: string, handler: RouteHandler): HttpApp;
  any(pattern: string, handler: RouteHandler): HttpApp;
  listen(host: string, port: number, cb: (listenSocket: ListenSocket | false) => void): HttpApp;
}

export interface HttpServerModule {
  App(): HttpApp;
  us_socket_local_port(listenSocket: ListenSocket): number;
  us_listen_socket_close(listenSocket: ListenSocket): void;
}

/** Compile-time proof that a uWS build satisfies the interface (both npm builds share these typings). */
export type UwsFits = typeof Uws extends HttpServerModule ? true : never;
export const uwsFits: UwsFits = true;
