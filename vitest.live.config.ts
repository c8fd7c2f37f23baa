// npm run test:live: the opt-in checks against the real providers (test/live/), each skipped unless its credentials are in the environment; no local server needed.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/live/**/*.test.ts"],
    testTimeout: 120_000,
  },
});
