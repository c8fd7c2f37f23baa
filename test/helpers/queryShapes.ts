// Checks recorded query shapes (src/db/queryShapes.ts) against the indexes the models declare: every query must be served by one.
import { readFileSync } from "node:fs";
import mongoose from "mongoose";
import type { QueryShape } from "../../src/db/queryShapes.js";

/** Each collection's declared indexes as lists of key fields, `_id` included. */
export async function declaredIndexes(): Promise<Map<string, string[][]>> {
  await import("../../src/db/models/index.js");
  const byCollection = new Map<string, string[][]>();
  const { outboxConnection } = await import("../../src/db/outboxConnection.js");
  // The outbox's models are on its own connection.
  for (const model of [...Object.values(mongoose.models), ...Object.values(outboxConnection.models)]) {
    const keys = model.schema.indexes().map(([fields]) => Object.keys(fields));
    byCollection.set(model.collection.collectionName, [["_id"], ...keys]);
  }
  return byCollection;
}

/**
 * Whether an index serves the query: for every filter branch, some index's leading field is filtered on (so the
 * index's prefix narrows the scan) and, when the query sorts, the same index gives the order: its first sort field
 * comes in that index right after fields the query filters on. With no filter at all, the index must lead with the
 * first sort field. (A shape records field names only, not equality against range; this is the rule for a prefix.)
 */
export function isServed(shape: QueryShape, indexes: readonly string[][]): boolean {
  const ordered = (ix: readonly string[], fields: readonly string[]) => {
    if (shape.sort.length === 0) return true;
    const at = ix.indexOf(shape.sort[0]!);
    return at >= 0 && ix.slice(0, at).every((f) => fields.includes(f));
  };
  return shape.filters.every((fields) =>
    fields.length > 0
      ? indexes.some((ix) => fields.includes(ix[0]!) && ordered(ix, fields))
      : shape.sort.length > 0 && indexes.some((ix) => ix[0] === shape.sort[0]),
  );
}

/** The recorded shapes no declared index serves, as readable lines. */
export function unservedShapes(file: string, indexes: Map<string, string[][]>): string[] {
  const lines = readFileSync(file, "utf8").split("\n").filter((l) => l !== "");
  const problems = new Set<string>();
  for (const line of lines) {
    const shape = JSON.parse(line) as QueryShape;
    const declared = indexes.get(shape.collection);
    if (!declared) problems.add(`${shape.collection}: no model declares this collection (${line})`);
    else if (!isServed(shape, declared)) problems.add(`${shape.collection}.${shape.operation} filter ${JSON.stringify(shape.filters)} sort ${JSON.stringify(shape.sort)}: no index serves it`);
  }
  return [...problems].sort();
}
