// Which database errors mean "unavailable" (503, never 500): the driver's own error names, and the same failures wrapped by a bulk write.
import { describe, expect, it } from "vitest";

/** What the pool throws when no connection frees up in time (its class is not exported; its name is what counts). */
const waitQueueTimeout = () => Object.assign(new Error("Timed out while checking out a connection from connection pool"), { name: "MongoWaitQueueTimeoutError" });
import { isDatabaseUnavailable } from "../../src/db/errors.js";
import { errorAnswer } from "../../src/platform/rest/errors.js";

describe("isDatabaseUnavailable", () => {
  it("takes the driver's unreachable and deadline errors", () => {
    expect(isDatabaseUnavailable(waitQueueTimeout())).toBe(true);
    expect(isDatabaseUnavailable({ name: "MongoServerSelectionError", message: "Server selection timed out after 1200 ms" })).toBe(true);
    expect(isDatabaseUnavailable({ name: "MongoServerError", code: 50, message: "operation exceeded time limit" })).toBe(true);
  });

  it("takes a pool checkout timeout reported by a bulk write (insertMany of cells under load), also as a cause", () => {
    // As seen under 50 concurrent bookings on the embedded server (bench:bookings): it was answered 500.
    const bulk = { name: "MongoBulkWriteError", message: "Timed out while checking out a connection from connection pool" };
    expect(isDatabaseUnavailable(bulk)).toBe(true);
    expect(errorAnswer(bulk)).toMatchObject({ httpStatus: 503, message: "service unavailable" });
    const wrapped = Object.assign(new Error("write failed"), { cause: waitQueueTimeout() });
    expect(isDatabaseUnavailable(wrapped)).toBe(true);
  });

  it("leaves other errors alone (a duplicate key, a bug)", () => {
    expect(isDatabaseUnavailable({ name: "MongoBulkWriteError", code: 11000, message: "E11000 duplicate key error" })).toBe(false);
    expect(isDatabaseUnavailable(new TypeError("x is undefined"))).toBe(false);
    expect(errorAnswer(new TypeError("x is undefined")).httpStatus).toBe(500);
  });
});
