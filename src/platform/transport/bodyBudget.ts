// How many request-body bytes the service holds in memory at once, per connection and in all, so many large or never-finished uploads cannot grow it without bound.
import { Code } from "@connectrpc/connect";
import { ApiError } from "../../domain/errors.js";

/**
 * Per connection: two of the largest messages (a 6 MB RPC with a 5 MB picture) at once. An HTTP/2 connection
 * may carry 100 streams; without this, 100 announced 6 MB messages would be 600 MB for one client.
 */
export const BODY_BYTES_PER_CONNECTION = 12 * 1024 * 1024;
/**
 * In all: about ten of the largest messages at once. With the baseline of the process (about 100 to 170 MB) this
 * keeps the service under its normal peak (about 220 MB under full load, bench/RESULTS.md) whatever clients send.
 */
const BODY_BYTES_TOTAL = 64 * 1024 * 1024;

/**
 * A running count of the bytes of request bodies held, by connection (the socket for HTTP/1.1, the session for
 * HTTP/2) and in total. A reader takes bytes as they arrive and gives them back when it is done with them; a
 * `take` that would pass either bound is refused (nothing taken) and the reader gives up on the body.
 */
class BodyBudget {
  private held = 0;
  private readonly byConnection = new WeakMap<object, number>();

  constructor(
    readonly perConnection: number,
    readonly total: number,
  ) {}

  take(connection: object, bytes: number): boolean {
    const mine = this.byConnection.get(connection) ?? 0;
    if (mine + bytes > this.perConnection || this.held + bytes > this.total) return false;
    this.byConnection.set(connection, mine + bytes);
    this.held += bytes;
    return true;
  }

  give(connection: object, bytes: number): void {
    if (bytes === 0) return;
    const mine = this.byConnection.get(connection) ?? 0;
    this.byConnection.set(connection, Math.max(0, mine - bytes));
    this.held = Math.max(0, this.held - bytes);
  }

  /** Bytes held now, in all. */
  inUse(): number {
    return this.held;
  }
}

/** The one budget of the process: every reader of request bodies shares it. */
export const bodyBudget = new BodyBudget(BODY_BYTES_PER_CONNECTION, BODY_BYTES_TOTAL);

/**
 * Uploaded files written to disk as they arrive (src/platform/rest/multipart.ts), per connection as above and in
 * all: some twenty-five 5 MB pictures wait there, outside the process's memory, for their turn to be read into it.
 * Each is deleted once its request has been answered.
 */
export const spoolBudget = new BodyBudget(BODY_BYTES_PER_CONNECTION, 128 * 1024 * 1024);

/**
 * The answer to a body refused by the budget: the service is momentarily full, the caller did nothing wrong and
 * may retry (RESOURCE_EXHAUSTED, as gRPC servers answer memory pressure; REST 503 with Retry-After).
 */
export function bodiesBusy(): ApiError {
  return new ApiError(Code.ResourceExhausted, "the service is reading too many request bodies at once; retry shortly", {
    httpStatus: 503,
    headers: { "retry-after": "1" },
  });
}
