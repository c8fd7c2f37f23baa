// Starts the shared real servers of the API test files, one per test worker (embedded database unless MONGODB_URI is set), and at the end proves every query they and the tests' own servers sent had an index.
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { pollingUri } from "./helpers/jongodb.js";
import { declaredIndexes, unservedShapes } from "./helpers/queryShapes.js";
import { buildService, startServer, type RunningServer } from "./helpers/server.js";

let servers: RunningServer[] = [];
const SHAPES = join(process.cwd(), ".tmp", `query-shapes-${process.pid}.jsonl`);
/** This run's build of the service (two runs in one checkout each have their own). */
const BUILD = join(process.cwd(), ".tmp", `service-${process.pid}`);

export async function setup(project: TestProject): Promise<void> {
  mkdirSync(join(process.cwd(), ".tmp"), { recursive: true });
  rmSync(SHAPES, { force: true });
  // Inherited by the test workers, so servers that test files start record their queries too.
  process.env.QUERY_SHAPES_FILE = SHAPES;
  /*
   * One per worker: a file talks to the server of the worker it runs in, so two files never share one at the same
   * time. They did with a single server, and booking writes of two files at once got wrong answers from the service
   * (a booking not found right after its 201, "booking was changed meanwhile", a 500 on a write conflict), which
   * the service must fix, not the tests (see the closing report of branch tests22).
   */
  // Inherited by the workers as well: every server of the run starts from it.
  await buildService(BUILD);
  const workers = Math.max(1, project.config.maxWorkers || project.vitest.config.maxWorkers || 1);
  // A start takes a few seconds; on a 2-core machine shared by several runs it took over 30 s (load 20-40), and
  // the whole run then failed before its first test.
  servers = await Promise.all(Array.from({ length: workers }, () => startServer({}, 120_000)));
  project.provide(
    "sharedServers",
    servers.map((server) => {
      // Its database, for tests that look at what the service stored (it says where its embedded one listens).
      const embedded = /embedded in-memory database at (mongodb:\/\/\S+?);/.exec(server.logs())?.[1];
      const databaseUri = process.env.MONGODB_URI || (embedded && pollingUri(embedded));
      if (!databaseUri) throw new Error(`a shared server said nothing about its database:\n${server.logs()}`);
      // What it said while starting, for the tests of start-up messages that a server with the default settings gives.
      return { baseUrl: server.baseUrl, startLog: server.logs(), databaseUri };
    }),
  );
}

export async function teardown(): Promise<void> {
  const codes = await Promise.all(servers.map((server) => server.stop()));
  rmSync(BUILD, { recursive: true, force: true });
  // Kept for whoever has to explain a test's 500: the shared servers' logs are nowhere else.
  servers.forEach((server, i) => writeFileSync(join(process.cwd(), ".tmp", `shared-server-${i + 1}.log`), server.logs()));
  const failed = codes.findIndex((code) => code !== 0);
  if (failed >= 0) throw new Error(`shared server ${failed + 1} exited with ${codes[failed]} on SIGTERM:\n${servers[failed].logs().slice(-3000)}`);
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

export interface SharedServer {
  baseUrl: string;
  /** What it wrote while starting. */
  startLog: string;
  /** Its MONGODB_URI: the run's, or its embedded database's (with the polling jongodb needs). */
  databaseUri: string;
}

declare module "vitest" {
  export interface ProvidedContext {
    /** One per worker, in the order of VITEST_POOL_ID (api.ts sharedServer() picks a file's). */
    sharedServers: SharedServer[];
  }
}
