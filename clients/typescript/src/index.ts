// The package's entry: the messages and services of proto/scheduling/v1 (generated into ./gen at build) and one Connect-ES client per service, with the credentials sent on every call.
import type { DescService } from "@bufbuild/protobuf";
import { createClient, type Client, type Interceptor, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import * as api from "./gen/index.js";

export * from "./gen/index.js";
export { Code, ConnectError, createClient } from "@connectrpc/connect";
export type { CallOptions, Client, Interceptor, Transport } from "@connectrpc/connect";

/** The services of scheduling.v1 by their proto names (`UserService`, `EventService`, ...): whatever proto/ has at build. */
type ServiceName = { [K in keyof typeof api]: (typeof api)[K] extends DescService ? K : never }[keyof typeof api];

/** One client per service, under the service's proto name: `clients.EventService.createEvent({...})`. */
export type SchedulingClients = { [K in ServiceName]: (typeof api)[K] extends infer S extends DescService ? Client<S> : never };

export interface SchedulingOptions {
  /** Where the service listens: `http://localhost:8080`. */
  baseUrl: string;
  /** An account's API key, sent as `x-api-key` (every service but AdminService and PublicBookingService needs one). */
  apiKey?: string;
  /** The service's `ADMIN_TOKEN`, sent as `x-admin-token` (AdminService). */
  adminToken?: string;
  /**
   * `grpc` (HTTP/2 without TLS for `http://`, the default), `connect` or `grpc-web` (HTTP/1.1, through any proxy).
   * The service answers all three on its one port.
   */
  protocol?: "grpc" | "connect" | "grpc-web";
  /** More interceptors (logging, tracing), run after the one that sets the credentials. */
  interceptors?: Interceptor[];
}

/** Sets the API key and the admin token on every request; the headers are the ones the service reads. */
export function credentials(options: Pick<SchedulingOptions, "apiKey" | "adminToken">): Interceptor {
  return (next) => (req) => {
    if (options.apiKey !== undefined) req.header.set("x-api-key", options.apiKey);
    if (options.adminToken !== undefined) req.header.set("x-admin-token", options.adminToken);
    return next(req);
  };
}

/** A transport to the service in the chosen protocol, with the credentials' interceptor first. */
export function createSchedulingTransport(options: SchedulingOptions): Transport {
  const common = { baseUrl: options.baseUrl, interceptors: [credentials(options), ...(options.interceptors ?? [])] };
  const protocol: string = options.protocol ?? "grpc";
  switch (protocol) {
    case "grpc":
      return createGrpcTransport(common);
    case "connect":
      return createConnectTransport({ ...common, httpVersion: "1.1" });
    case "grpc-web":
      return createGrpcWebTransport({ ...common, httpVersion: "1.1" });
    default:
      throw new TypeError(`protocol must be "grpc", "connect" or "grpc-web", not ${JSON.stringify(protocol)}`);
  }
}

const isService = (value: unknown): value is DescService => typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "service";

/** A client for each service of scheduling.v1, over one transport (made from `options`, or the one given). */
export function createSchedulingClients(options: SchedulingOptions | Transport): SchedulingClients {
  const transport = "baseUrl" in options ? createSchedulingTransport(options) : options;
  const services = Object.entries(api as Record<string, unknown>).filter((entry): entry is [string, DescService] => isService(entry[1]));
  return Object.fromEntries(services.map(([name, service]) => [name, createClient(service, transport)])) as SchedulingClients;
}
