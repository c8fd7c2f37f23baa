// Writing many outbox documents in few commands: an insert that stores each document once (a duplicate = stored before), and the grouping of per-document updates into one command per shared value.
import type mongoose from "mongoose";
import { onlyDuplicateKeys } from "../db/errors.js";

/*
 * Why batches. On the embedded server one write COMMAND costs time that grows faster than the number of documents
 * in its collection (about 2 ms at 0, 22 ms at 1 000, 70-90 ms at 2 000, 280 ms at 4 000 documents; bench/RESULTS.md),
 * and commands run one after another. An insertMany or updateMany of 16 documents costs what one insertOne or
 * updateOne does; a bulkWrite of 16 operations costs 16 of them. So the outbox writes a batch as ONE insertMany or
 * updateMany, never one command per document and never a bulkWrite.
 */

/** Rounds of "insert, then read which were there already" before the insert gives up (each round stores some). */
const INSERT_ROUNDS = 8;

/**
 * Inserts `docs`, each at most once: a document whose _id is stored already (planned before, or an insert applied
 * whose answer was lost) is left as it is, every other one is inserted. MongoDB inserts the others of an unordered
 * insert that hit a duplicate; the embedded server stops at the first, so after a duplicate the ids stored by then
 * are read (reads are cheap) and the rest inserted again, in one command each round.
 */
export async function insertOnce<T extends { _id: unknown }>(collection: mongoose.mongo.Collection<T>, docs: readonly T[]): Promise<void> {
  let left = [...docs];
  for (let round = 0; left.length > 0; round++) {
    try {
      await collection.insertMany(left as mongoose.mongo.OptionalUnlessRequiredId<T>[], { ordered: false });
      return;
    } catch (err) {
      if (!onlyDuplicateKeys(err) || round >= INSERT_ROUNDS) throw err;
    }
    const ids = left.map((d) => d._id);
    const filter = { _id: { $in: ids } } as unknown as mongoose.mongo.Filter<T>;
    const stored = new Set((await collection.find(filter, { projection: { _id: 1 } }).toArray()).map((d) => String(d._id)));
    left = left.filter((d) => !stored.has(String(d._id)));
  }
}

/**
 * Groups items by a value they share (`keyOf`): one updateMany per group, the value set once for all of them.
 * Pure; the groups keep the items' order.
 */
export function groupBy<T, K>(items: readonly T[], keyOf: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}
