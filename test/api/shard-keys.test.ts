// The indexes of a running server's database against the shard keys docs/operations.md names (its "Sharding" table): every collection has a row, every unique index is listed and starts with the shard key.
import { readFileSync } from "node:fs";
import mongoose from "mongoose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sharedServer } from "../helpers/api.js";
import { newHost } from "../helpers/fixtures.js";
import { declaredIndexes } from "../helpers/queryShapes.js";

type Key = Record<string, number | string>;

interface Row {
  shardKey: Key;
  unique: Key[];
}

/** `{ user_id: 1, key: "hashed" }` as an object, its fields in order. */
function parseKey(text: string): Key {
  return JSON.parse(text.replace(/([A-Za-z_][A-Za-z0-9_]*)\s*:/g, '"$1":')) as Key;
}

/** The rows of the table under "## Sharding" in docs/operations.md, by collection. */
function shardingTable(markdown: string): Map<string, Row> {
  const section = markdown.split(/^## /m).find((s) => s.startsWith("Sharding"));
  if (section === undefined) throw new Error("docs/operations.md has no Sharding section");
  const rows = new Map<string, Row>();
  for (const line of section.split("\n")) {
    const cells = line.split("|").slice(1, -1).map((c) => c.trim());
    if (cells.length < 3 || cells[0] === "Collection" || /^-+$/.test(cells[0]!)) continue;
    const keys = (cell: string) => [...cell.matchAll(/`(\{[^`]*\})`/g)].map((m) => parseKey(m[1]!));
    const [shardKey] = keys(cells[1]!);
    if (shardKey === undefined) throw new Error(`no shard key in the row of ${cells[0]}`);
    rows.set(cells[0]!, { shardKey, unique: keys(cells[2]!) });
  }
  return rows;
}

const fields = (key: Key) => Object.keys(key);
const same = (a: Key, b: Key) => JSON.stringify(Object.entries(a)) === JSON.stringify(Object.entries(b));
/** Whether the index's fields start with every field of the shard key (what a sharded cluster asks of a unique index). */
const startsWith = (index: Key, shardKey: Key) => fields(shardKey).every((f, i) => fields(index)[i] === f);

describe("shard keys (docs/operations.md)", () => {
  let conn: mongoose.Connection;
  const table = shardingTable(readFileSync("docs/operations.md", "utf8"));

  beforeAll(async () => {
    // An account and its event make sure the server has written, so its collections all exist.
    await newHost();
    conn = await mongoose.createConnection(sharedServer().databaseUri).asPromise();
  });
  afterAll(async () => {
    await conn?.close();
  });

  it("the table parses, each shard key starting with the account or the document's own _id", () => {
    expect(table.size).toBeGreaterThan(20);
    expect(same(table.get("bookings")!.shardKey, { user_id: 1, private_key: 1 })).toBe(true);
    for (const [collection, row] of table) expect(["user_id", "_id", "public_id"], collection).toContain(fields(row.shardKey)[0]);
  });

  it("every collection of the database has a row, and every row a collection", async () => {
    // The models' collections, which the server builds at start; with a real MongoDB also every collection it lists
    // (the embedded server has no listCollections).
    const collections = new Set((await declaredIndexes()).keys());
    const listed = await conn.db!.listCollections({}, { nameOnly: true }).toArray().catch(() => []);
    for (const c of listed) if (!c.name.startsWith("system.")) collections.add(c.name);
    expect([...collections].sort()).toEqual([...table.keys()].sort());
  });

  it("every unique index is in its row and starts with the collection's shard key, and a ranged shard key has an index", async () => {
    const problems: string[] = [];
    for (const [collection, row] of table) {
      const indexes = (await conn.db!.collection(collection).listIndexes().toArray()) as Array<{ name: string; key: Key; unique?: boolean }>;
      const unique = indexes.filter((ix) => ix.unique === true && ix.name !== "_id_").map((ix) => ix.key);
      for (const ix of unique) if (!row.unique.some((listed) => same(listed, ix))) problems.push(`${collection}: unique index ${JSON.stringify(ix)} is not in its row`);
      for (const listed of row.unique) if (!unique.some((ix) => same(listed, ix))) problems.push(`${collection}: its row lists ${JSON.stringify(listed)}, which the database does not have as a unique index`);
      for (const ix of [...unique, ...row.unique]) if (!startsWith(ix, row.shardKey)) problems.push(`${collection}: unique index ${JSON.stringify(ix)} does not start with the shard key ${JSON.stringify(row.shardKey)}`);
      const ranged = Object.values(row.shardKey).every((v) => v === 1);
      if (ranged && !indexes.some((ix) => startsWith(ix.key, row.shardKey))) problems.push(`${collection}: no index starts with the shard key ${JSON.stringify(row.shardKey)}`);
    }
    expect(problems).toEqual([]);
  });
});
