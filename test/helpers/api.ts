// Test clients for every way in: REST with fetch, Connect (HTTP/1.1 and HTTP/2), gRPC-Web, and @grpc/grpc-js.
import * as grpc from "@grpc/grpc-js";
import type { DescMessage, DescMethodUnary, DescService, MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import { createClient, type Client, ConnectError, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { inject } from "vitest";
import { grpcClientAt, unaryAt } from "./grpcAt.js";
import type { SharedServer } from "../globalSetup.js";
import { ADMIN_TOKEN } from "./server.js";

export { ADMIN_TOKEN };

let ownServer: string | undefined;

/** For a test file that runs against a server of its own (startServer with other settings): every helper here then calls it. */
export function useServer(url: string | undefined): void {
  ownServer = url;
}

/**
 * The shared server of the worker this file runs in (test/globalSetup.ts starts one per worker, so files running at
 * the same time never share one): its URL, start-up log and database.
 */
export function sharedServer(): SharedServer {
  const all = inject("sharedServers");
  return all[(Number(process.env.VITEST_POOL_ID ?? "1") - 1) % all.length];
}

export function baseUrl(): string {
  return ownServer ?? sharedServer().baseUrl;
}

/** JSON read back from the API: tests assert on its shape, so it is deliberately loosely typed. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export interface RestAnswer<T = Json> {
  status: number;
  body: { success: boolean; message: string; data: T; status: number | string };
  headers: Headers;
}

/** One REST call to the run's shared server; `body` objects are sent as JSON, strings as they are. */
export async function rest<T = Json>(
  method: string,
  path: string,
  opts: { key?: string; body?: unknown; headers?: Record<string, string>; admin?: boolean } = {},
): Promise<RestAnswer<T>> {
  return restAt<T>(baseUrl(), method, `/api/v1${path}`, opts);
}

/**
 * One call to `base` + `path` (the whole path, e.g. "/api/v1/user"), for tests that start servers of their own;
 * `ms` is how long the answer took.
 */
export async function restAt<T = Json>(
  base: string,
  method: string,
  path: string,
  opts: { key?: string; body?: unknown; headers?: Record<string, string>; admin?: boolean; timeoutMs?: number } = {},
): Promise<RestAnswer<T> & { ms: number }> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key !== undefined) headers["X-API-KEY"] = opts.key;
  if (opts.admin) headers["X-ADMIN-TOKEN"] = ADMIN_TOKEN;
  let body: BodyInit | undefined;
  if (typeof opts.body === "string" || opts.body instanceof FormData) body = opts.body;
  else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers["Content-Type"] ??= "application/json";
  }
  const t0 = performance.now();
  const res = await fetch(`${base}${path}`, { method, headers, body, signal: opts.timeoutMs === undefined ? undefined : AbortSignal.timeout(opts.timeoutMs) });
  const text = await res.text();
  const ms = performance.now() - t0;
  let parsed: RestAnswer<T>["body"];
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`non-JSON answer ${res.status} from ${method} ${path}: ${text.slice(0, 200)}`);
  }
  return { status: res.status, body: parsed, headers: res.headers, ms };
}

// Made in fixtures.ts with the other test data; exported here too for the tests that import it from this file.
export { newAccount } from "./fixtures.js";

type Kind = "connect-h1" | "connect-h2" | "grpc-web";

/** A Connect-ES client over one of the HTTP transports, sending the API key as metadata. */
export function connectClient<S extends DescService>(service: S, kind: Kind, key?: string): Client<S> {
  const interceptors = key === undefined ? [] : [
    (next: Parameters<Interceptor>[0]) => async (req: Parameters<Parameters<Interceptor>[0]>[0]) => {
      req.header.set("x-api-key", key);
      return next(req);
    },
  ];
  const transport =
    kind === "grpc-web"
      ? createGrpcWebTransport({ baseUrl: baseUrl(), httpVersion: "1.1", interceptors })
      : createConnectTransport({ baseUrl: baseUrl(), httpVersion: kind === "connect-h2" ? "2" : "1.1", interceptors });
  return createClient(service, transport);
}

/** The three Connect-ES transports, for tests that run once per protocol. */
export const CONNECT_KINDS: Kind[] = ["connect-h1", "connect-h2", "grpc-web"];

const grpcClients = new Map<string, grpc.Client>();
/** One grpc-js channel per server for the whole test file. */
function grpcClient(): grpc.Client {
  const url = baseUrl();
  let c = grpcClients.get(url);
  if (!c) {
    c = grpcClientAt(url);
    grpcClients.set(url, c);
  }
  return c;
}

/** A unary call with @grpc/grpc-js over real HTTP/2 to the run's server; rejects with a ConnectError carrying the gRPC status. */
export function grpcCall<I extends DescMessage, O extends DescMessage>(
  method: DescMethodUnary<I, O>,
  request: MessageInitShape<I>,
  metadata: Record<string, string> = {},
): Promise<MessageShape<O>> {
  return unaryAt(grpcClient(), method, request, metadata);
}

/** gRPC via grpc-js, typed from the service descriptor: grpc(UserService, "GetUser", {}, key). */
export function grpcUnary<S extends DescService, M extends keyof S["method"] & string>(
  service: S,
  localName: M,
  request: MessageInitShape<S["method"][M]["input"]>,
  key?: string,
  extra: Record<string, string> = {},
): Promise<MessageShape<S["method"][M]["output"]>> {
  const m = service.method[localName] as DescMethodUnary<S["method"][M]["input"], S["method"][M]["output"]>;
  return grpcCall(m, request, key === undefined ? extra : { "x-api-key": key, ...extra });
}

/** Runs `fn` and returns the ConnectError code it rejected with (fails the test if it resolved). */
export async function rpcError(fn: () => Promise<unknown>): Promise<ConnectError> {
  try {
    await fn();
  } catch (err) {
    return ConnectError.from(err);
  }
  throw new Error("expected the call to fail");
}
