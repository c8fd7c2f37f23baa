// Writes that exactly one of many racing callers may win, on the embedded database the tests and demos run on: single-use documents (src/db/takeOnce.ts) and the cap on different callers (DistinctInWindow).
import mongoose from "mongoose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { takeOnce } from "../../src/db/takeOnce.js";
import { DistinctInWindow } from "../../src/features/accounts/rateLimit.js";
import { startDatabase, type TestDatabase } from "../helpers/jongodb.js";

/*
 * Why here and not over HTTP. The embedded server's findAndModify finds, then writes by _id alone: two callers lose
 * the race only when their commands interleave inside the database, within a fraction of a millisecond. Requests
 * through a server rarely meet that closely (the cap's HTTP test let a fourth booker through once in many full runs);
 * callers sending straight to the database meet in about one round in ten. These are the writes the service sends,
 * raced from four connections, as four replicas would.
 */
const ROUNDS = 60;
const RACERS = 8;

let db: TestDatabase;
let replicas: mongoose.Connection[];

beforeAll(async () => {
  db = await startDatabase();
  await mongoose.connect(db.uri);
  replicas = await Promise.all(Array.from({ length: 4 }, () => mongoose.createConnection(db.uri).asPromise()));
});

afterAll(async () => {
  await Promise.all(replicas?.map((c) => c.close()) ?? []);
  await mongoose.disconnect();
  await db?.kill();
});

describe("takeOnce", () => {
  it("gives a used-once document to exactly one of the callers racing for it, as it was before", async () => {
    const winners: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const _id = `state-${round}`;
      await replicas[0].collection("racing_states").insertOne({ _id: _id as never, used_at: null, owner: "ann" });
      const taken = await Promise.all(
        Array.from({ length: RACERS }, (_, i) => takeOnce<{ _id: string; used_at: Date | null; owner: string }>(replicas[i % 4].collection("racing_states"), { _id, used_at: null }, { $set: { used_at: new Date() } })),
      );
      const won = taken.filter((t) => t !== null);
      winners.push(won.length);
      expect(won[0]).toEqual({ _id, used_at: null, owner: "ann" });
    }
    expect(winners).toEqual(Array(ROUNDS).fill(1));
  });
});

describe("DistinctInWindow (the cap on new bookers per address)", () => {
  it("admits exactly the limit of different callers racing each other, however they interleave", async () => {
    const cap = new DistinctInWindow("racing", { limit: 3, windowSeconds: 3600 }, () => Date.now());
    const admitted: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const verdicts = await Promise.all(Array.from({ length: RACERS }, (_, i) => cap.admit(`group-${round}`, `caller-${i}`)));
      admitted.push(verdicts.filter((v) => v.allowed).length);
    }
    expect(admitted).toEqual(Array(ROUNDS).fill(3));
  });
});
