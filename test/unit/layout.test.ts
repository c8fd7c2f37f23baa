// The layout rules of the source tree (.dependency-cruiser.cjs, docs/architecture.md): a wrong import, a cycle between folders, or a model written outside its writer module fails the suite.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createRequire } from "node:module";
import { cruise, type ICruiseResult, type IConfiguration } from "dependency-cruiser";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const rules = createRequire(import.meta.url)("../../.dependency-cruiser.cjs") as IConfiguration;

async function cruiseSource(): Promise<ICruiseResult> {
  const tsConfig = JSON.parse(readFileSync("tsconfig.json", "utf8")) as object;
  const result = await cruise(["src"], { validate: true, ruleSet: rules, ...rules.options }, undefined, { tsConfig });
  return result.output as ICruiseResult;
}

/** The folder a module belongs to for the layering: src/<top>, or src/<top>/<name> under platform, features and providers. */
function folderOf(path: string): string {
  const parts = path.split("/");
  const nested = ["platform", "features", "providers"].includes(parts[1]) && parts.length > 3;
  return parts.slice(0, nested ? 3 : 2).join("/").replace(/\.ts$/, "");
}

/** A cycle in the graph of folders, as the list of folders along it, or undefined. */
function folderCycle(edges: Map<string, Set<string>>): string[] | undefined {
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (node: string): string[] | undefined => {
    if (state.get(node) === "done") return undefined;
    if (state.get(node) === "open") return [...path.slice(path.indexOf(node)), node];
    state.set(node, "open");
    path.push(node);
    for (const next of edges.get(node) ?? []) {
      const found = visit(next);
      if (found) return found;
    }
    path.pop();
    state.set(node, "done");
    return undefined;
  };
  for (const node of edges.keys()) {
    const found = visit(node);
    if (found) return found;
  }
  return undefined;
}

/**
 * The models that have a writer, and the only files that may write them (../shared ARCHITECTURE: one writer per
 * aggregate, the only code that writes its collections, each write ending in its follow-up duty). A new aggregate
 * is a row (teams: `TeamModel: ["src/features/teams/writes.ts"]`).
 */
const WRITERS: Record<string, readonly string[]> = {
  // The outbox's relay clears what it planned of each booking (changes_owed, planned_seq).
  // The feed's sweep clears the mark of bookings whose changes it found in the feed (feed_pending).
  // A reschedule's second and third writes, by whoever finishes the move (its request, the sweep, a retry, a claim).
  BookingModel: ["src/features/bookings/writes.ts", "src/outbox/relay.ts", "src/features/bookings/feed.ts", "src/features/bookings/moves.ts"],
  BookingChangeModel: ["src/features/bookings/feed.ts"],
  BookingCellModel: ["src/features/bookings/cells.ts"],
  // The private keys made before keys carried their account, copied at start.
  BookingKeyModel: ["src/features/bookings/keys.ts"],
  EventModel: ["src/features/events/writes.ts"],
  EventQuestionModel: ["src/features/events/writes.ts"],
  SingleUseLinkModel: ["src/features/events/linkWrites.ts"],
  UserModel: ["src/features/accounts/writes.ts"],
  AccountKeyModel: ["src/features/accounts/writes.ts"],
  ScheduleModel: ["src/features/schedules/writes.ts"],
  CalendarConnectionModel: ["src/features/calendars/writes.ts"],
  CalendarModel: ["src/features/calendars/writes.ts"],
  TeamModel: ["src/features/teams/writes.ts"],
  TeamKeyModel: ["src/features/teams/writes.ts"],
};

/** Model methods that write (a document's own `.save()` / `.deleteOne()` are checked apart). */
const MODEL_WRITES = new Set([
  "create", "insertMany", "updateOne", "updateMany", "replaceOne", "deleteOne", "deleteMany", "bulkWrite", "bulkSave",
  "findOneAndUpdate", "findOneAndDelete", "findOneAndReplace", "findOneAndRemove", "findByIdAndUpdate", "findByIdAndDelete", "findByIdAndRemove", "remove",
]);
/** What may be done with a model's raw collection without writing: anything else (a write, or handing it out) is a write. */
const COLLECTION_READS = new Set(["collectionName", "find", "findOne", "countDocuments", "estimatedDocumentCount", "aggregate", "distinct", "indexes", "listIndexes", "indexExists"]);

/** Each model's collection, as the models declare them (`<Name>Model` is `mongoose.model("<Name>")`). */
async function collectionNames(): Promise<Map<string, string>> {
  await import("../../src/db/models/index.js");
  const mongoose = (await import("mongoose")).default;
  return new Map(Object.values(mongoose.models).map((m) => [`${m.modelName}Model`, m.collection.collectionName]));
}

/**
 * Where `file` writes a model whose writer it is not: a write method called on the model, its raw collection written
 * or handed out, a new document of it, `.save()` in a file that imports it, or its collection reached by name.
 * Read from the syntax tree, so comments and strings do not count.
 */
function writesOutsideWriters(file: string, text: string, collectionOf: ReadonlyMap<string, string>): string[] {
  const guarded = new Map(Object.entries(WRITERS).filter(([, writers]) => !writers.includes(file)));
  if (guarded.size === 0) return [];
  const byCollection = new Map([...guarded.keys()].map((m) => [collectionOf.get(m), m]));
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const imported = new Set<string>();
  const found: string[] = [];
  const at = (node: ts.Node, what: string) => found.push(`${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1} ${what}`);
  let saves: ts.Node[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportSpecifier(node) && guarded.has(node.name.text)) imported.add(node.name.text);
    if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression) && guarded.has(node.expression.text)) {
      const model = node.expression.text;
      const name = node.name.text;
      if (MODEL_WRITES.has(name)) at(node, `${model}.${name}`);
      if (name === "collection") {
        const parent = node.parent;
        const use = ts.isPropertyAccessExpression(parent) && parent.expression === node ? parent.name.text : undefined;
        if (use === undefined || !COLLECTION_READS.has(use)) at(node, `${model}.collection${use === undefined ? " handed out" : `.${use}`}`);
      }
    }
    if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && guarded.has(node.expression.text)) at(node, `new ${node.expression.text}`);
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const name = node.expression.name.text;
      if (name === "save") saves.push(node);
      const [first] = node.arguments;
      if (name === "collection" && first !== undefined && ts.isStringLiteralLike(first) && byCollection.has(first.text)) at(node, `collection("${first.text}") of ${byCollection.get(first.text)}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  if (imported.size > 0) for (const save of saves) at(save, `.save() where ${[...imported].join(", ")} is imported`);
  saves = [];
  return found;
}

/**
 * The findAndModify calls of src/ by file. Each matches by a key alone, with no condition that must still hold when
 * it writes: the embedded database drops a filter's condition between its find and its write (src/db/takeOnce.ts),
 * so a conditional write is a takeOnce or an updateOne. A new call is a change here, with why its filter is a key.
 */
const FIND_AND_MODIFY: Record<string, number> = {
  // The account's own document by _id, its settings written (the answer is the document after; no condition).
  "src/features/accounts/writes.ts": 1,
  // A window's count by _id, an $inc without condition: the embedded server answers the count after racing
  // increments as well, which only refuses sooner.
  "src/features/accounts/rateLimit.ts": 1,
  // The host's conference setting and meeting account, by their unique keys.
  "src/features/meetings/service.ts": 2,
};
const FIND_AND_MODIFY_METHODS = new Set(["findOneAndUpdate", "findOneAndDelete", "findOneAndReplace", "findByIdAndUpdate", "findByIdAndDelete"]);

/** How many findAndModify calls each file of src/ makes, read from the syntax tree. */
function findAndModifyCalls(dir = "src", counts: Record<string, number> = {}): Record<string, number> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) findAndModifyCalls(path, counts);
    else if (path.endsWith(".ts")) {
      const visit = (node: ts.Node): void => {
        if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && FIND_AND_MODIFY_METHODS.has(node.expression.name.text)) counts[path] = (counts[path] ?? 0) + 1;
        ts.forEachChild(node, visit);
      };
      visit(ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true));
    }
  }
  return counts;
}

describe("source layout", () => {
  it("every import follows the layering rules and no folder imports another that imports it back", async () => {
    const result = await cruiseSource();
    const violations = result.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}${v.cycle ? ` (${v.cycle.map((c) => c.name).join(" -> ")})` : ""}`);
    expect(violations).toEqual([]);
    const edges = new Map<string, Set<string>>();
    for (const m of result.modules) {
      if (!m.source.startsWith("src/")) continue;
      const from = folderOf(m.source);
      for (const d of m.dependencies) {
        if (!d.resolved.startsWith("src/")) continue;
        const to = folderOf(d.resolved);
        if (to === from) continue;
        if (!edges.has(from)) edges.set(from, new Set());
        edges.get(from)!.add(to);
      }
    }
    expect(edges.size).toBeGreaterThan(10);
    expect(folderCycle(edges)).toBeUndefined();
  }, 60_000);

  it("each model with a writer is written only by its writer module, so no write path can forget a follow-up duty", async () => {
    const collectionOf = await collectionNames();
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (path.endsWith(".ts")) offenders.push(...writesOutsideWriters(path, readFileSync(path, "utf8"), collectionOf));
      }
    };
    walk("src");
    expect(offenders).toEqual([]);
  });

  it("every row of the writers' table names a model and a writer module that exist", async () => {
    const collectionOf = await collectionNames();
    for (const [model, writers] of Object.entries(WRITERS)) {
      expect(collectionOf.get(model), model).toBeDefined();
      expect(writers.filter((w) => existsSync(w)), model).not.toEqual([]);
    }
  });

  it("the check of writes finds every way of writing a model from another file", async () => {
    const collectionOf = await collectionNames();
    const found = (code: string) => writesOutsideWriters("src/features/pages/x.ts", `import { UserModel } from "../../db/models/user.js";\n${code}`, collectionOf);
    for (const write of [
      "await UserModel.updateOne({ _id }, { $set: { bio: null } });",
      "await UserModel.collection.insertOne(doc);",
      "const users = UserModel.collection; await users.deleteMany({});",
      "await new UserModel(doc).save();",
      "const doc = await UserModel.findById(id); doc.bio = null; await doc.save();",
      "await UserModel.findByIdAndUpdate(id, {});",
      "await db.collection<UserDoc>(\"users\").updateOne({}, {});",
      "const write = UserModel.bulkWrite;",
    ]) {
      expect(found(write), write).not.toEqual([]);
    }
    for (const read of [
      "await UserModel.findOne({ _id }).lean();",
      "await UserModel.collection.find({}).toArray();",
      "const name = UserModel.collection.collectionName;",
      "// UserModel.updateOne in a comment",
      "const text = \"UserModel.updateOne\";",
    ]) {
      expect(found(read), read).toEqual([]);
    }
  });

  it("findAndModify is called only where its filter is a key, as listed: a conditional write takes its document once", () => {
    expect(findAndModifyCalls()).toEqual(FIND_AND_MODIFY);
  });
});
