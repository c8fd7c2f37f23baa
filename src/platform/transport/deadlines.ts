// A call whose deadline (grpc-timeout, connect-timeout-ms) passed before it ended ends DEADLINE_EXCEEDED, unary or streamed, whatever its handler did after.
import { Code, ConnectError, type Interceptor, type UnaryRequest, type StreamRequest } from "@connectrpc/connect";
import { interceptorOf, type UnaryStep } from "./fastUnary.js";

/**
 * Why: Connect's handlers abort the call's signal when its deadline passes, but answer whatever the handler then
 * returns: a stream that stops when its signal aborts (WatchBookingChanges) ended with status OK, and a unary call
 * answered 100 ms after a 1 ns deadline was OK too, so the caller could not tell a cut stream from a finished one.
 * gRPC's rule is that a call past its deadline is DEADLINE_EXCEEDED. Only Connect's handlers see deadlines (the fast
 * unary path declines any call that carries one), so the check reads the call's signal only when its headers name a
 * deadline: on the fast path it costs two header lookups and never makes the signal.
 */
function hasDeadline(req: UnaryRequest | StreamRequest): boolean {
  return req.header.has("grpc-timeout") || req.header.has("connect-timeout-ms");
}

/** The error of a call whose deadline has passed (the one Connect aborted its signal with), or undefined. */
function deadlinePassed(req: UnaryRequest | StreamRequest): ConnectError | undefined {
  if (!req.signal.aborted) return undefined;
  const reason: unknown = req.signal.reason;
  return reason instanceof ConnectError && reason.code === Code.DeadlineExceeded ? reason : undefined;
}

/** What a call ends with once its deadline may have passed: its own outcome, or DEADLINE_EXCEEDED. */
function settled<T>(req: UnaryRequest | StreamRequest, outcome: { value: T } | { error: unknown }): T {
  const passed = deadlinePassed(req);
  if (passed) throw new ConnectError(passed.rawMessage, Code.DeadlineExceeded);
  if ("error" in outcome) throw outcome.error;
  return outcome.value;
}

const unary: UnaryStep = (next) => (req) => {
  if (!hasDeadline(req)) return next(req);
  let answer: ReturnType<typeof next>;
  try {
    answer = next(req);
  } catch (error) {
    return settled(req, { error });
  }
  return answer instanceof Promise ? answer.then((value) => settled(req, { value }), (error: unknown) => settled(req, { error })) : settled(req, { value: answer });
};

/** A stream's messages, ending DEADLINE_EXCEEDED instead of its own end once its deadline has passed. */
async function* untilDeadline<T>(req: UnaryRequest | StreamRequest, messages: AsyncIterable<T>): AsyncIterable<T> {
  try {
    yield* messages;
  } catch (error) {
    settled(req, { error });
  }
  settled(req, { value: undefined });
}

const streams: Interceptor = (next) => async (req) => {
  if (!hasDeadline(req)) return next(req);
  const res = await next(req);
  return res.stream ? { ...res, message: untilDeadline(req, res.message) } : res;
};

/** The rule as one interceptor for both paths; put it innermost, so the request records see the code the caller gets. */
export const deadlines: Interceptor = interceptorOf(unary, streams);
