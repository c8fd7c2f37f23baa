// Test runner settings: API and page tests against one real server for the whole run (test/globalSetup.ts), unit and fake-provider tests without it; files in parallel.
import { configDefaults, defineConfig } from "vitest/config";

/** Tests of pure functions and of the fake providers: they need no server. */
const WITHOUT_SERVER = ["test/unit/**/*.test.ts", "test/fakes/**/*.test.ts"];

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
    projects: [
      // Everything else, a new folder included, gets the shared server.
      { extends: true, test: { name: "api", include: ["test/**/*.test.ts"], exclude: [...configDefaults.exclude, ...WITHOUT_SERVER], globalSetup: ["test/globalSetup.ts"] } },
      // Running only these starts no server.
      { extends: true, test: { name: "unit", include: WITHOUT_SERVER } },
    ],
  },
});
