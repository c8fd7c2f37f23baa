// Which database errors mean "unavailable" or "transient" (503 with Retry-After, never 500): the driver's own error names and labels, MongoDB's codes, the embedded server's words, also wrapped by a bulk write.
import { describe, expect, it } from "vitest";

/** What the pool throws when no connection frees up in time (its class is not exported; its name is what counts). */
const waitQueueTimeout = () => Object.assign(new Error("Timed out while checking out a connection from connection pool"), { name: "MongoWaitQueueTimeoutError" });
import { Code } from "@connectrpc/connect";
import { createRequire } from "node:module";
import * as driver from "mongodb";
import mongoose from "mongoose";
import { createServer, connect } from "node:net";
import { isDatabaseUnavailable, isTransientDatabaseError, mayHaveBeenApplied } from "../../src/db/errors.js";
import { errorAnswer } from "../../src/platform/rest/errors.js";
import { toConnectError } from "../../src/platform/transport/errors.js";

/** Node's error for a write to a socket the other side has ended (a loopback server that closes at once). */
async function writeAfterPeerEnded(): Promise<Error> {
  const server = createServer((s) => s.end());
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  try {
    const socket = connect((server.address() as { port: number }).port, "127.0.0.1");
    socket.on("error", () => {});
    await new Promise((r) => socket.once("end", r));
    return await new Promise<Error>((resolve) => socket.write("hello", (err) => resolve(err as Error)));
  } finally {
    server.close();
  }
}

describe("isDatabaseUnavailable", () => {
  it("takes the driver's unreachable and deadline errors", () => {
    expect(isDatabaseUnavailable(waitQueueTimeout())).toBe(true);
    expect(isDatabaseUnavailable({ name: "MongoServerSelectionError", message: "Server selection timed out after 1200 ms" })).toBe(true);
    // Mongoose's own name for it (what mongoose.connect throws).
    expect(isDatabaseUnavailable({ name: "MongooseServerSelectionError", message: "connect ECONNREFUSED 127.0.0.1:9" })).toBe(true);
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

  it("takes the pool's error for connections interrupted when the monitor lost the server (a heartbeat timed out), also in a bulk write", () => {
    // The driver's own class (not exported), named without the Mongo prefix: under load (a heartbeat past its time),
    // an operation in flight got it and lost-answers.test answered 500 instead of 503.
    const { PoolClearedOnNetworkError } = createRequire(import.meta.url)("mongodb/lib/cmap/errors.js") as { PoolClearedOnNetworkError: new (pool: { address: string }) => Error };
    const interrupted = new PoolClearedOnNetworkError({ address: "127.0.0.1:27017" });
    expect(interrupted).toMatchObject({ name: "PoolClearedOnNetworkError", message: "Connection to 127.0.0.1:27017 interrupted due to server monitor timeout" });
    expect(isDatabaseUnavailable(interrupted)).toBe(true);
    expect(errorAnswer(interrupted)).toMatchObject({ httpStatus: 503, message: "service unavailable" });
    expect(toConnectError(interrupted).code).toBe(Code.Unavailable);
    // Interrupted in use: the command may have reached the server.
    expect(mayHaveBeenApplied(interrupted)).toBe(true);
    const bulk = { name: "MongoBulkWriteError", message: interrupted.message };
    expect(isDatabaseUnavailable(bulk)).toBe(true);
  });

  it("takes Node's own error for a command written to a connection the database closed, as the driver lets it through", async () => {
    // The real error: a write to a socket whose peer has ended it. Its stack as the driver's drain wait throws it
    // (seen in test/api/faults.test.ts: a GET /user in flight when the database died answered 500).
    const epipe = await writeAfterPeerEnded();
    expect(epipe).toMatchObject({ code: "EPIPE", message: "This socket has been ended by the other party" });
    const fromDriver = Object.assign(epipe, {
      stack: `${epipe.message}\n    at Socket.writeAfterFIN [as write] (node:net:566:14)\n    at Connection.writeCommand (/app/node_modules/mongodb/lib/cmap/connection.js:408:29)`,
    });
    expect(isDatabaseUnavailable(fromDriver)).toBe(true);
    // The same from a bundle of the service (esbuild, as the tests run it): the driver's file is gone from the
    // stack, its class is named _Connection (a full run's faults.test answered 500 to a write ECONNRESET so).
    const bundled = Object.assign(new Error("write ECONNRESET"), {
      code: "ECONNRESET",
      stack: "Error: write ECONNRESET\n    at afterWriteDispatched (node:internal/stream_base_commons:161:15)\n    at Writable.write (node:internal/streams/writable:510:10)\n    at _Connection.writeCommand (/srv/.tmp/service-1/src/app/bundle/main.js:24315:27)\n    at async _Connection.sendWire (/srv/.tmp/service-1/src/app/bundle/main.js:24179:11)",
    });
    expect(isDatabaseUnavailable(bundled)).toBe(true);
    expect(mayHaveBeenApplied(bundled)).toBe(true);
    expect(errorAnswer(fromDriver)).toMatchObject({ httpStatus: 503, message: "service unavailable" });
    expect(toConnectError(fromDriver).code).toBe(Code.Unavailable);
    // Whether the command left before the socket went is not known: a write keeps what guards it.
    expect(mayHaveBeenApplied(fromDriver)).toBe(true);
    // The same code from anything but the driver is not the database's.
    const elsewhere = Object.assign(new Error("write EPIPE"), { code: "EPIPE", stack: "Error: write EPIPE\n    at afterWriteDispatched (node:internal/stream_base_commons:161:15)" });
    expect(isDatabaseUnavailable(elsewhere)).toBe(false);
  });

  it("leaves other errors alone (a duplicate key, a bug)", () => {
    expect(isDatabaseUnavailable({ name: "MongoBulkWriteError", code: 11000, message: "E11000 duplicate key error" })).toBe(false);
    expect(isDatabaseUnavailable(new TypeError("x is undefined"))).toBe(false);
    expect(errorAnswer(new TypeError("x is undefined")).httpStatus).toBe(500);
  });
});

describe("isTransientDatabaseError", () => {
  /** A write conflict as MongoDB reports it inside a transaction: code 112 with the TransientTransactionError label. */
  const writeConflict = () => {
    const err = new mongoose.mongo.MongoServerError({ code: 112, codeName: "WriteConflict", errmsg: "WriteConflict error: this operation conflicted with another operation. Please retry your operation or multi-document transaction." });
    err.addErrorLabel("TransientTransactionError");
    return err;
  };
  const shapes: Array<[string, unknown]> = [
    ["MongoDB's write conflict (code and label)", writeConflict()],
    ["a label alone", Object.assign(new Error("something"), { errorLabels: ["TransientTransactionError"] })],
    ["an unknown commit result", Object.assign(new Error("commit"), { errorLabels: ["UnknownTransactionCommitResult"] })],
    ["NoSuchTransaction", { name: "MongoServerError", code: 251, codeName: "NoSuchTransaction", message: "Transaction 3 has been aborted." }],
    ["an election", { name: "MongoServerError", code: 10107, message: "not primary" }],
    // The embedded server's words, as the admin import met them (issue 25): no label, no code.
    ["the embedded server's bulk write in a busy session", { name: "MongoBulkWriteError", message: "transaction already in progress for this session", writeErrors: [] }],
    ["the embedded server's commit conflict", { name: "MongoServerError", message: "commit transaction write conflict" }],
    ["a bulk write whose write error is a conflict", { name: "MongoBulkWriteError", message: "write failed", writeErrors: [{ code: 112, errmsg: "WriteConflict" }] }],
    ["a conflict as the cause", Object.assign(new Error("import failed"), { cause: writeConflict() })],
  ];

  it.each(shapes)("takes %s, and every protocol answers it 503 / UNAVAILABLE with Retry-After", (_name, err) => {
    expect(isTransientDatabaseError(err)).toBe(true);
    expect(errorAnswer(err)).toEqual({ httpStatus: 503, message: "service unavailable", data: {}, headers: { "retry-after": "1" } });
    const ce = toConnectError(err);
    expect(ce.code).toBe(Code.Unavailable);
    expect(ce.metadata.get("retry-after")).toBe("1");
  });

  it("an unreachable database gets Retry-After too", () => {
    expect(errorAnswer(waitQueueTimeout()).headers).toEqual({ "retry-after": "1" });
  });

  it("leaves a duplicate key, a refused write and a bug alone (500 stays 500)", () => {
    for (const err of [
      { name: "MongoBulkWriteError", code: 11000, message: "E11000 duplicate key error", writeErrors: [{ code: 11000, errmsg: "E11000" }] },
      { name: "MongoServerError", code: 121, message: "Document failed validation" },
      new TypeError("x is undefined"),
    ]) {
      expect(isTransientDatabaseError(err)).toBe(false);
    }
    expect(errorAnswer(new TypeError("x is undefined"))).toMatchObject({ httpStatus: 500, headers: {} });
  });
});

describe("bulk writes and write concerns, as the driver itself makes them (issue 39: bench:outbox answered 500)", () => {
  // The driver's own classes (the same copy mongoose uses), built as its bulk write code builds them
  // (mongodb/lib/bulk/common.js): their constructors are internal, so their types are read loosely here.
  const { MongoBulkWriteError, MongoNetworkTimeoutError, MongoNetworkError, MongoServerError, MongoServerSelectionError, MongoWriteConcernError } = driver;
  const { BulkWriteResult, WriteError, WriteConcernError } = createRequire(import.meta.url)("mongodb/lib/bulk/common.js") as {
    BulkWriteResult: new (result: object, ordered: boolean) => driver.BulkWriteResult;
    WriteError: new (error: object) => driver.WriteError;
    WriteConcernError: new (error: object) => driver.WriteConcernError;
  };
  type Bulk = ConstructorParameters<typeof MongoBulkWriteError>;
  const result = () =>
    new BulkWriteResult({ ok: 1, writeErrors: [], writeConcernErrors: [], insertedIds: [], nInserted: 0, nUpserted: 0, nMatched: 0, nModified: 0, nRemoved: 0, upserted: [] }, true);
  const bulk = (error: unknown) => new MongoBulkWriteError(error as Bulk[0], result());
  const refusedAs503 = (err: unknown) => {
    const ce = toConnectError(err);
    expect([ce.code, ce.metadata.get("retry-after")]).toEqual([Code.Unavailable, "1"]);
    expect(errorAnswer(err)).toMatchObject({ httpStatus: 503, message: "service unavailable", headers: { "retry-after": "1" } });
  };

  it("a bulk write whose connection timed out or closed, or that found no server in time (a driver error it wraps, with no code)", () => {
    refusedAs503(bulk(new MongoNetworkTimeoutError("connection 3 to 127.0.0.1:27017 timed out", { beforeHandshake: false })));
    refusedAs503(bulk(new MongoNetworkError("connection 7 to 127.0.0.1:27017 closed")));
    refusedAs503(bulk(new MongoServerSelectionError("Server selection timed out after 1200 ms", { type: "Unknown", servers: new Map(), stale: false, compatible: true, heartbeatFrequencyMS: 1000, localThresholdMS: 15 } as never)));
  });

  it("a bulk write whose inserts ran past their deadline (write errors of code 50) or met a write conflict (112)", () => {
    const timedOut = new WriteError({ code: 50, index: 0, errmsg: "operation exceeded time limit" } as never);
    refusedAs503(bulk({ message: "operation exceeded time limit", code: 50, writeErrors: [timedOut] }));
    // Unordered: the first error a duplicate (answered as such by the callers that look), a later one a timeout.
    const dup = new WriteError({ code: 11000, index: 0, errmsg: "E11000 duplicate key error" } as never);
    expect(isDatabaseUnavailable(bulk({ message: "E11000 duplicate key error", code: 11000, writeErrors: [dup, new WriteError({ code: 50, index: 1, errmsg: "operation exceeded time limit" } as never)] }))).toBe(true);
    const conflict = new WriteError({ code: 112, index: 0, errmsg: "WriteConflict error" } as never);
    refusedAs503(bulk({ message: "WriteConflict error", code: 112, writeErrors: [conflict] }));
    refusedAs503(bulk(new MongoServerError({ message: "operation exceeded time limit", code: 50, codeName: "MaxTimeMSExpired" })));
  });

  it("a write concern not confirmed in time (wtimeout, 64) or lost to a shutdown (91), alone or in a bulk write", () => {
    refusedAs503(bulk(new WriteConcernError({ code: 64, errmsg: "waiting for replication timed out" } as never)));
    refusedAs503(bulk({ message: "waiting for replication timed out", code: 64 }));
    const concern = new MongoWriteConcernError({ writeConcernError: { code: 91, errmsg: "shutdown in progress" } } as never);
    refusedAs503(concern);
    refusedAs503(bulk(new WriteConcernError({ code: 91, errmsg: "shutdown in progress" } as never)));
  });

  it("keeps what is not the database's moment: a bulk write of duplicates, a validation error", () => {
    const dup = new WriteError({ code: 11000, index: 0, errmsg: "E11000 duplicate key error" } as never);
    const duplicates = bulk({ message: "E11000 duplicate key error", code: 11000, writeErrors: [dup] });
    expect([isDatabaseUnavailable(duplicates), isTransientDatabaseError(duplicates)]).toEqual([false, false]);
    const invalid = new MongoServerError({ message: "Document failed validation", code: 121 });
    expect(toConnectError(invalid).code).toBe(Code.Internal);
  });
});
