// A REST row's Server-Sent Events form: its server-streaming RPC answered as `text/event-stream`, each message an event, a comment line keeping the connection open.
import accepts from "accepts";
import type { DescMethod, DescMethodServerStreaming, DescService, JsonValue } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Clock } from "../../domain/clock.js";
import { forbidden } from "../../domain/errors.js";
import { errorText, logger } from "../log.js";
import { sendEnvelope } from "./envelope.js";
import { errorAnswer } from "./errors.js";
import { requestFromJson, responseToJson, type JsonObject } from "./json.js";

/** A REST row's Server-Sent Events form (RpcRoute.events of ./table.ts); `Input` is what the row reads from the request. */
export interface EventStream<Input> {
  /** The server-streaming RPC, by its local name on the row's service. */
  rpc: string;
  /** Its request, from the HTTP request and the `Last-Event-ID` header if sent. */
  request: (input: Input, lastEventId: string | undefined) => JsonValue;
  /** The event's `data` from the message's REST JSON; default: all of it. */
  data?: (message: JsonObject) => JsonValue;
  id: (message: JsonObject) => string;
  event: (message: JsonObject) => string;
}

/** The row's service, its implementation object (undefined: not implemented) and the row's name for the log. */
interface StreamTarget {
  service: DescService;
  impl: Record<string, unknown> | undefined;
  name: string;
}

/** A comment line at least this often, so proxies do not close a quiet stream (callers.md: at least every 30 s). */
const KEEP_ALIVE_MS = 15_000;

/**
 * The service's time for a stream's keep-alive: besides every KEEP_ALIVE_MS of real time, a quiet stream gets its
 * comment line as soon as a test's clock (CLOCK_CONTROL=on) is moved past it, so no test waits real seconds for one.
 */
export interface StreamTime {
  clock: Clock;
  onMove?: (listener: () => void) => () => void;
}

/**
 * Whether the client asks for the event-stream form (`Accept: text/event-stream`) rather than the list: by the
 * header's preferences (`accepts`, Express's own negotiation), so `text/event-stream;q=0` or one ranked below
 * `application/json` is the list; a header naming neither, or none, is the list too.
 */
export function wantsEvents(req: IncomingMessage): boolean {
  if (req.headers.accept === undefined) return false;
  return accepts(req).type(["application/json", "text/event-stream"]) === "text/event-stream";
}

function streamingMethod(target: StreamTarget, rpc: string): DescMethodServerStreaming {
  const m: DescMethod | undefined = target.service.methods.find((x) => x.localName === rpc);
  if (!m || m.methodKind !== "server_streaming") throw new Error(`REST route ${target.name}: no server-streaming RPC ${rpc}`);
  return m as DescMethodServerStreaming;
}

/**
 * Answers the row as a stream of events. Until the first message the answer is still an envelope (a bad key's 401,
 * an expired token's 410, a stream limit's 429); after it, the stream ends when the RPC's does (a stopping server)
 * or the client goes.
 */
export async function streamEvents<Input>(
  target: StreamTarget,
  events: EventStream<Input>,
  req: IncomingMessage,
  res: ServerResponse,
  input: Input,
  contextOf: (service: DescService, method: DescMethod) => HandlerContext,
  time?: StreamTime,
): Promise<void> {
  const method = streamingMethod(target, events.rpc);
  const ctx = contextOf(target.service, method);
  const impl = target.impl?.[method.localName] as ((request: unknown, ctx: HandlerContext) => AsyncIterable<unknown>) | undefined;
  let keepAlive: NodeJS.Timeout | undefined;
  let stopFollowingClock: (() => void) | undefined;
  let messages: AsyncIterator<unknown> | undefined;
  try {
    if (!impl) throw forbidden("not implemented");
    const lastEventId = typeof req.headers["last-event-id"] === "string" && req.headers["last-event-id"] !== "" ? req.headers["last-event-id"] : undefined;
    const request = requestFromJson(method.input, events.request(input, lastEventId));
    messages = impl.call(target.impl, request, ctx)[Symbol.asyncIterator]();
    let next = await messages.next();
    res.writeHead(200, { "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-store", "X-Accel-Buffering": "no" });
    res.flushHeaders();
    let wroteAt = time?.clock.nowMs() ?? 0;
    const write = (text: string) => {
      res.write(text);
      wroteAt = time?.clock.nowMs() ?? 0;
    };
    keepAlive = setInterval(() => write(": keep-alive\n\n"), KEEP_ALIVE_MS);
    stopFollowingClock = time?.onMove?.(() => {
      if (!res.destroyed && time.clock.nowMs() - wroteAt >= KEEP_ALIVE_MS) write(": keep-alive\n\n");
    });
    res.once("close", () => void messages?.return?.(undefined));
    while (!next.done && !res.destroyed) {
      const json = responseToJson(method.output, next.value as never);
      write(`id: ${events.id(json)}\nevent: ${events.event(json)}\ndata: ${JSON.stringify(events.data ? events.data(json) : json)}\n\n`);
      next = await messages.next();
    }
    res.end();
  } catch (err) {
    if (res.headersSent) {
      // A stopping server (UNAVAILABLE) or a failure mid-stream: the client resumes with its Last-Event-ID.
      res.end();
      return;
    }
    const answer = errorAnswer(err);
    if (answer.httpStatus >= 500 && answer.httpStatus !== 503) logger.error({ msg: "request failed", route: target.name, error: errorText(err) });
    for (const [k, v] of Object.entries(answer.headers)) res.setHeader(k, v);
    sendEnvelope(res, answer.httpStatus, answer.message, answer.data);
  } finally {
    clearInterval(keepAlive);
    stopFollowingClock?.();
  }
}
