// Starts one real server (embedded database unless MONGODB_URI is set) for every API test file, and at the end proves every query it and the tests' own servers sent had an index.
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { pollingUri } from "./helpers/jongodb.js";
import { declaredIndexes, unservedShapes } from "./helpers/queryShapes.js";
import { startServer, type RunningServer } from "./helpers/server.js";

let server: RunningServer | undefined;
const SHAPES = join(process.cwd(), ".tmp", `query-shapes-${process.pid}.jsonl`);

export async function setup(project: TestProject): Promise<void> {
  mkdirSync(join(process.cwd(), ".tmp"), { recursive: true });
  rmSync(SHAPES, { force: true });
  // Inherited by the test workers, so servers that test files start record their queries too.
  process.env.QUERY_SHAPES_FILE = SHAPES;
  server = await startServer();
  project.provide("baseUrl", server.baseUrl);
  // What it said while starting, for the tests of start-up messages that a server with the default settings gives.
  project.provide("sharedStartLog", server.logs());
  // Its database, for tests that look at what the service stored (it says where its embedded one listens).
  const embedded = /embedded in-memory database at (mongodb:\/\/\S+?);/.exec(server.logs())?.[1];
  const database = process.env.MONGODB_URI || (embedded && pollingUri(embedded));
  if (!database) throw new Error(`the shared server said nothing about its database:\n${server.logs()}`);
  project.provide("sharedDatabaseUri", database);
}

export async function teardown(): Promise<void> {
  const code = await server?.stop();
  // Kept for whoever has to explain a test's 500: the shared server's log is nowhere else.
  if (server) writeFileSync(join(process.cwd(), ".tmp", "shared-server.log"), server.logs());
  if (code !== 0) throw new Error(`server exited with ${code} on SIGTERM:\n${server?.logs().slice(-3000)}`);
  // A run of a few files may have sent no query at all; the full run always has.
  if (!existsSync(SHAPES)) return;
  const unserved = unservedShapes(SHAPES, await declaredIndexes());
  if (unserved.length > 0) {
    // Vitest only logs an error thrown by a global teardown ("error during close") and still exits 0, so the
    // exit code is set here: without it the proof would never fail a run.
    process.exitCode = 1;
    throw new Error(`queries without an index (declare one in src/db/models/):\n${unserved.join("\n")}`);
  }
}

declare module "vitest" {
  export interface ProvidedContext {
    baseUrl: string;
    sharedStartLog: string;
    /** MONGODB_URI of the shared server: the run's, or its embedded database's (with the polling jongodb needs). */
    sharedDatabaseUri: string;
  }
}
