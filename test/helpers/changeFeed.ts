// Readers of the booking-change feed (callers.md "Booking changes") for tests: WatchBookingChanges over each RPC protocol, and the REST stream's Server-Sent Events.
import { createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { BookingService, type BookingChange } from "../../gen/scheduling/v1/booking_pb.js";
import { baseUrl, type Json } from "./api.js";

export type FeedProtocol = "grpc" | "grpc-web" | "connect-h1" | "connect-h2";
export const FEED_PROTOCOLS: FeedProtocol[] = ["grpc", "grpc-web", "connect-h1", "connect-h2"];

/** A BookingService client over `kind` with the account's key. */
export function feedClient(kind: FeedProtocol, key: string, base = baseUrl()) {
  const interceptors: Interceptor[] = [(next) => async (req) => (req.header.set("x-api-key", key), next(req))];
  const transport =
    kind === "grpc"
      ? createGrpcTransport({ baseUrl: base, interceptors })
      : kind === "grpc-web"
        ? createGrpcWebTransport({ baseUrl: base, httpVersion: "1.1", interceptors })
        : createConnectTransport({ baseUrl: base, httpVersion: kind === "connect-h2" ? "2" : "1.1", interceptors });
  return createClient(BookingService, transport);
}

/** A watch that keeps what it receives; `stop` ends it from the client's side; `failure` is how the server ended it. */
export function watch(kind: FeedProtocol, key: string, after = "", base = baseUrl(), eventIds: string[] = []) {
  const got: BookingChange[] = [];
  const abort = new AbortController();
  let failure: unknown;
  let ended = false;
  const done = (async () => {
    try {
      for await (const c of feedClient(kind, key, base).watchBookingChanges({ after, eventIds }, { signal: abort.signal })) got.push(c);
    } catch (err) {
      if (!abort.signal.aborted) failure = err;
    } finally {
      ended = true;
    }
  })();
  return { got, failure: () => failure, ended: () => ended, stop: async () => (abort.abort(), await done) };
}

/** Reads a REST SSE stream of the feed until `stop`: its events, and its comment lines. */
export function sse(key: string, headers: Record<string, string> = {}, query = "", base = baseUrl()) {
  const events: { id: string; event: string; data: Json }[] = [];
  const comments: string[] = [];
  const abort = new AbortController();
  let status = 0;
  let ended = false;
  const done = (async () => {
    try {
      const res = await fetch(`${base}/api/v1/booking_changes${query}`, { headers: { Accept: "text/event-stream", "X-API-KEY": key, ...headers }, signal: abort.signal });
      status = res.status;
      const reader = res.body!.getReader();
      let text = "";
      for (;;) {
        const { value, done: end } = await reader.read();
        if (end) break;
        text += Buffer.from(value).toString();
        let cut: number;
        while ((cut = text.indexOf("\n\n")) >= 0) {
          const block = text.slice(0, cut);
          text = text.slice(cut + 2);
          comments.push(...block.split("\n").filter((l) => l.startsWith(":")));
          const fields = Object.fromEntries(block.split("\n").filter((l) => !l.startsWith(":")).map((l) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 2)]));
          if (fields.id !== undefined) events.push({ id: fields.id, event: fields.event, data: JSON.parse(fields.data) });
        }
      }
    } catch {
      // aborted
    } finally {
      ended = true;
    }
  })();
  /** `ended`: the stream is over (the server ended it, or `stop`). */
  return { events, comments, status: () => status, ended: () => ended, stop: async () => (abort.abort(), await done) };
}
