// Idempotency keys in MongoDB (the idempotency_keys collection): taking a key for a run, keeping its answer, letting it go; every replica shares them.
import { isDuplicateKeyError } from "./errors.js";
import { IdempotencyKeyModel, type IdempotencyKeyDoc } from "./models/idempotencyKey.js";

/** What a run found when it asked for a key (the shape of src/platform/transport/idempotency.ts Begun). */
type Begun<A> = { state: "started"; token: string; since: Date } | { state: "running"; fingerprint: string } | { state: "done"; fingerprint: string; answer: A };

export interface IdempotencyTimes {
  /** How long a key and its answer are kept. */
  ttlMs: number;
  /** How long a run holds its key before a repeat may take it over. */
  leaseMs: number;
}

/**
 * The store of src/platform/transport/idempotency.ts over MongoDB. Taking a key is one insert on its `_id` (the
 * unique index decides between replicas racing for it); a key whose day is over, which its last run let go, or
 * whose run's lease ran out, is taken over by a compare-and-set on the run's token, so of two repeats only one
 * runs. A key's day starts at its first use and is kept by every later run within it (`since`): only a key whose
 * day is over starts a new one. The lookup itself reads `expires_at`, since MongoDB's TTL monitor deletes only
 * once a minute, and late under load (the embedded server never).
 */
export function mongoIdempotencyStore<A extends object>(times: IdempotencyTimes) {
  const collection = IdempotencyKeyModel.collection;
  const running = (id: string, fingerprint: string, token: string, now: Date, since: Date): IdempotencyKeyDoc => ({
    _id: id,
    fingerprint,
    state: "running",
    token,
    lease_until: new Date(now.getTime() + times.leaseMs),
    answer: null,
    created_at: since,
    expires_at: new Date(since.getTime() + times.ttlMs),
  });
  return {
    async begin(id: string, fingerprint: string, token: string, now: Date): Promise<Begun<A>> {
      // A few rounds at most: each one lost means another request took or dropped the key in between.
      for (let round = 0; ; round++) {
        try {
          await collection.insertOne(running(id, fingerprint, token, now, now) as never);
          return { state: "started", token, since: now };
        } catch (err) {
          if (!isDuplicateKeyError(err) || round >= 3) throw err;
        }
        // _id index.
        const found = await IdempotencyKeyModel.findOne({ _id: id }).lean<IdempotencyKeyDoc>();
        if (found === null) continue;
        const dayOver = found.expires_at <= now;
        const free = dayOver || found.state === "released" || (found.state === "running" && found.lease_until <= now);
        if (!free) return found.state === "running" ? { state: "running", fingerprint: found.fingerprint } : { state: "done", fingerprint: found.fingerprint, answer: found.answer as A };
        const since = dayOver ? now : found.created_at;
        // _id index; the token makes it a compare-and-set.
        const { _id, ...fresh } = running(id, fingerprint, token, now, since);
        const took = await IdempotencyKeyModel.updateOne({ _id, token: found.token }, { $set: fresh });
        if (took.modifiedCount === 1) return { state: "started", token, since };
      }
    },

    async finish(id: string, token: string, answer: A): Promise<void> {
      // _id index.
      await IdempotencyKeyModel.updateOne({ _id: id, token }, { $set: { state: "done", answer } });
    },

    async release(id: string, token: string): Promise<void> {
      // _id index. Kept, marked free: the next run within the key's day is the same request's next try (its day,
      // and so its write's name, stay), where a deleted record would start a new day.
      await IdempotencyKeyModel.updateOne({ _id: id, token }, { $set: { state: "released" } });
    },
  };
}
