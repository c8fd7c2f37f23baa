// Test runner settings: API and page tests against one real server for the whole run (test/globalSetup.ts), unit and fake-provider tests without it; files in parallel.
import { configDefaults, defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** Tests of pure functions and of the fake providers: they need no server. */
const WITHOUT_SERVER = ["test/unit/**/*.test.ts", "test/fakes/**/*.test.ts"];

/**
 * Vitest queues one project's files after the other's, by project name: the unit files (two of them take 10-14 s
 * of reading calendars) ran after every API file, alone at the end of the run. Queued first they run beside
 * the API files' long ones, and the run ends on the smallest API files. Within a project, vitest's own order.
 */
class UnitFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    return [...sorted.filter((f) => f.project.name === "unit"), ...sorted.filter((f) => f.project.name !== "unit")];
  }
}

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    setupFiles: ["test/setup.ts"],
    // On 2 cores vitest's default is a single worker, and files then wait for each other's sleeps, servers and
    // browsers; most of a file's time is waiting, so four share the cores well (bench/RESULTS.md, "Test suite").
    maxWorkers: 4,
    // A worker keeps its modules from one file to the next instead of loading vitest, the helpers and the
    // generated code again for every file: about a sixth of the run's CPU time. Test files keep no state in
    // shared modules beyond what they reset themselves (api.ts useServer).
    isolate: false,
    sequence: { sequencer: UnitFilesFirst },
    projects: [
      // Everything else, a new folder included, gets the shared server.
      { extends: true, test: { name: "api", include: ["test/**/*.test.ts"], exclude: [...configDefaults.exclude, ...WITHOUT_SERVER], globalSetup: ["test/globalSetup.ts"] } },
      // Running only these starts no server.
      { extends: true, test: { name: "unit", include: WITHOUT_SERVER } },
    ],
  },
});
