// Idempotency keys in MongoDB (the idempotency_keys collection): taking a key for a run, keeping its answer, letting it go; every replica shares them.
import { isDuplicateKeyError } from "./errors.js";
import { IdempotencyKeyModel, type IdempotencyKeyDoc } from "./models/idempotencyKey.js";

/** What a run found when it asked for a key (the shape of src/platform/transport/idempotency.ts Begun). */
type Begun<A> = { state: "started"; token: string } | { state: "running"; fingerprint: string } | { state: "done"; fingerprint: string; answer: A };

export interface IdempotencyTimes {
  /** How long a key and its answer are kept. */
  ttlMs: number;
  /** How long a run holds its key before a repeat may take it over. */
  leaseMs: number;
}

/**
 * The store of src/platform/transport/idempotency.ts over MongoDB. Taking a key is one insert on its `_id` (the
 * unique index decides between replicas racing for it); a key whose day is over, or whose run's lease ran out,
 * is taken over by a compare-and-set on the run's token, so of two repeats only one runs.
 */
export function mongoIdempotencyStore<A extends object>(times: IdempotencyTimes) {
  const collection = IdempotencyKeyModel.collection;
  const running = (id: string, fingerprint: string, token: string, now: Date): IdempotencyKeyDoc => ({
    _id: id,
    fingerprint,
    state: "running",
    token,
    lease_until: new Date(now.getTime() + times.leaseMs),
    answer: null,
    created_at: now,
    expires_at: new Date(now.getTime() + times.ttlMs),
  });
  return {
    async begin(id: string, fingerprint: string, token: string, now: Date): Promise<Begun<A>> {
      // A few rounds at most: each one lost means another request took or dropped the key in between.
      for (let round = 0; ; round++) {
        try {
          await collection.insertOne(running(id, fingerprint, token, now) as never);
          return { state: "started", token };
        } catch (err) {
          if (!isDuplicateKeyError(err) || round >= 3) throw err;
        }
        // _id index.
        const found = await IdempotencyKeyModel.findOne({ _id: id }).lean<IdempotencyKeyDoc>();
        if (found === null) continue;
        const stale = found.expires_at <= now || (found.state === "running" && found.lease_until <= now);
        if (!stale) return found.state === "running" ? { state: "running", fingerprint: found.fingerprint } : { state: "done", fingerprint: found.fingerprint, answer: found.answer as A };
        // _id index; the token makes it a compare-and-set.
        const { _id, ...fresh } = running(id, fingerprint, token, now);
        const took = await IdempotencyKeyModel.updateOne({ _id, token: found.token }, { $set: fresh });
        if (took.modifiedCount === 1) return { state: "started", token };
      }
    },

    async finish(id: string, token: string, answer: A): Promise<void> {
      // _id index.
      await IdempotencyKeyModel.updateOne({ _id: id, token }, { $set: { state: "done", answer } });
    },

    async release(id: string, token: string): Promise<void> {
      // _id index.
      await IdempotencyKeyModel.deleteOne({ _id: id, token });
    },
  };
}
