// Test runner settings: API and page tests against one real server for the whole run (test/globalSetup.ts), unit and fake-provider tests without it; files in parallel.
import { existsSync } from "node:fs";
import { configDefaults, defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** Tests of pure functions and of the fake providers: they need no server. */
const WITHOUT_SERVER = ["test/unit/**/*.test.ts", "test/fakes/**/*.test.ts"];

/**
 * Files that are small but long, because they wait on purpose (a database that never comes for the 15 s the
 * docs promise, one frozen, leases running out) or import 10 000 bookings. Vitest, knowing no durations on a
 * clean clone, queues the biggest files first, so these ran last and the run ended on one of them alone.
 */
const WAITING_FILES = ["test/api/faults.test.ts", "test/api/import-large.test.ts", "test/api/stalled-db.test.ts", "test/api/outbox-crash.test.ts", "test/api/reminder-deliveries.test.ts"];
/**
 * Files small in bytes but long in time, which vitest's order (the biggest first, on a clean clone) queued last: the
 * run ended on them, one or two workers busy for 10-15 s while the others had nothing left (teams-fair 17 s and
 * npm-start 14 s, started 17 s and 19 s before the end of a 331 s run). They go right after the unit files.
 */
const SLOW_SMALL_FILES = ["test/api/teams-fair.test.ts", "test/api/npm-start.test.ts"];
for (const file of [...WAITING_FILES, ...SLOW_SMALL_FILES]) if (!existsSync(file)) throw new Error(`vitest.config.ts names ${file}, which is gone`);

/**
 * The waiting files first; then the unit files, which vitest would queue after every API file (projects by
 * name), where the two that read calendars for 10-14 s ran alone at the end; then the slow small files; then the
 * rest in vitest's order.
 */
class WaitingFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const named = (list: string[], f: TestSpecification) => list.some((w) => f.moduleId.endsWith(w));
    const rank = (f: TestSpecification) => (named(WAITING_FILES, f) ? 0 : f.project.name === "unit" ? 1 : named(SLOW_SMALL_FILES, f) ? 2 : 3);
    return sorted.map((f, i) => ({ f, i })).sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i).map(({ f }) => f);
  }
}

export default defineConfig({
  test: {
    testTimeout: 30_000,
    // A hook that starts a server waits for its start (test/helpers/server.ts: up to 120 s on a loaded machine).
    hookTimeout: 150_000,
    pool: "forks",
    setupFiles: ["test/setup.ts"],
    // On 2 cores vitest's default is a single worker, and files then wait for each other's sleeps, servers and
    // browsers; most of a file's time is waiting, so four share the cores well (bench/RESULTS.md, "Test suite").
    maxWorkers: 4,
    // A worker keeps its modules from one file to the next instead of loading vitest, the helpers and the
    // generated code again for every file: about a sixth of the run's CPU time. Test files keep no state in
    // shared modules beyond what they reset themselves (api.ts useServer).
    isolate: false,
    sequence: { sequencer: WaitingFilesFirst },
    projects: [
      // Everything else, a new folder included, gets the shared server.
      { extends: true, test: { name: "api", include: ["test/**/*.test.ts"], exclude: [...configDefaults.exclude, ...WITHOUT_SERVER], globalSetup: ["test/globalSetup.ts"] } },
      // Running only these starts no server.
      { extends: true, test: { name: "unit", include: WITHOUT_SERVER } },
    ],
  },
});
