// `npm run test:live`: the provider flows against the real Google, Microsoft 365 and Zoom with a test account (each skipped without its credentials); not part of `npm test`.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/live/**/*.live.ts"],
    testTimeout: 60_000,
    pool: "forks",
  },
});
