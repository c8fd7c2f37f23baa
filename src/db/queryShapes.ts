// Records the shape of every query the service sends (collection, operation, filter keys, sort) to a file, so a test can prove each one has an index; and, for the write benchmark, every operation.
import { appendFileSync } from "node:fs";
import mongoose from "mongoose";

/** One query as an index sees it: the fields it filters on (one list per `$or` branch) and sorts by. */
export interface QueryShape {
  collection: string;
  operation: string;
  /** Filter fields; a query with `$or` has one entry per branch (each with the fields outside the `$or`). */
  filters: string[][];
  sort: string[];
}

/** Operations whose first argument is a filter an index must serve. Inserts and index builds have none. */
const FILTERED = new Set(["find", "findOne", "countDocuments", "updateOne", "updateMany", "deleteOne", "deleteMany", "findOneAndUpdate", "findOneAndDelete", "findOneAndReplace", "replaceOne", "distinct"]);

type Plain = Record<string, unknown>;
const isPlain = (v: unknown): v is Plain => typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof mongoose.Types.ObjectId) && !(v instanceof Date);

/** The filter's fields, with `$and` flattened and `$or`/`$nor` branches multiplied out. */
export function filterFields(filter: unknown): string[][] {
  if (!isPlain(filter)) return [[]];
  let branches: string[][] = [[]];
  for (const [key, value] of Object.entries(filter)) {
    if (key === "$and" && Array.isArray(value)) {
      for (const part of value) {
        const sub = filterFields(part);
        branches = branches.flatMap((b) => sub.map((s) => [...b, ...s]));
      }
    } else if ((key === "$or" || key === "$nor") && Array.isArray(value)) {
      const subs = value.flatMap((part) => filterFields(part));
      branches = branches.flatMap((b) => subs.map((s) => [...b, ...s]));
    } else if (!key.startsWith("$")) {
      branches = branches.map((b) => [...b, key]);
    }
  }
  return branches.map((b) => [...new Set(b)].sort());
}

function shapeOf(collection: string, operation: string, args: unknown[]): QueryShape | undefined {
  if (operation === "aggregate") {
    const first = Array.isArray(args[0]) ? (args[0][0] as unknown) : undefined;
    const match = isPlain(first) && isPlain(first.$match) ? first.$match : {};
    return { collection, operation, filters: filterFields(match), sort: [] };
  }
  if (!FILTERED.has(operation)) return undefined;
  // distinct(field, filter); every other: (filter, ...).
  const filter = operation === "distinct" ? args[1] : args[0];
  const options = args.find((a, i) => i > 0 && isPlain(a) && "sort" in a) as Plain | undefined;
  const sort = isPlain(options?.sort) ? Object.keys(options.sort) : [];
  return { collection, operation, filters: filterFields(filter), sort };
}

/** Documents an operation writes: an insert's count, one for any other write, none for a read. */
function documentsWritten(operation: string, args: unknown[]): number {
  if (operation === "insertMany") return Array.isArray(args[0]) ? args[0].length : 0;
  if (operation === "insertOne" || operation === "replaceOne" || operation.startsWith("update") || operation.startsWith("delete") || operation.startsWith("findOneAnd")) return 1;
  if (operation === "bulkWrite") return Array.isArray(args[0]) ? args[0].length : 0;
  return 0;
}

/**
 * From now on: every new query shape is appended to `shapesFile` as a JSON line (each shape once per process), and
 * every operation to `logFile` (collection, operation, documents written), each when given.
 */
export function recordQueries(files: { shapesFile?: string; logFile?: string }): void {
  const seen = new Set<string>();
  mongoose.set("debug", (collection: string, operation: string, ...args: unknown[]) => {
    if (files.logFile) appendFileSync(files.logFile, JSON.stringify({ collection, operation, documents: documentsWritten(operation, args) }) + "\n");
    if (!files.shapesFile) return;
    const shape = shapeOf(collection, operation, args);
    if (!shape) return;
    const line = JSON.stringify(shape);
    if (seen.has(line)) return;
    seen.add(line);
    appendFileSync(files.shapesFile, line + "\n");
  });
}
