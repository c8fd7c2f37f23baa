// The layout rules of the source tree (docs/architecture.md), checked by dependency-cruiser inside npm test (test/unit/layout.test.ts).
/** Folders a layer may import besides itself and the generated code. */
const may = (from, allowed) => ({
  name: `${from.replace(/[^a-z]+/g, "-")}-imports`,
  comment: `${from} may import only ${allowed.join(", ") || "nothing of ours"}`,
  severity: "error",
  from: { path: `^src/${from}(/|\\.ts$)` },
  to: { path: "^src/", pathNot: [`^src/${from}(/|\\.ts$)`, ...allowed.map((a) => `^src/${a}(/|\\.ts$)`)] },
});

module.exports = {
  forbidden: [
    may("domain", []),
    may("i18n", ["domain"]),
    may("platform/log", []),
    may("db", ["domain", "platform/log"]),
    may("platform/transport", ["domain", "platform/log", "db/errors"]),
    may("platform/rest", ["platform/transport", "domain", "platform/log"]),
    may("platform/http", ["platform/rest", "platform/transport", "domain", "platform/log"]),
    may("outbox", ["db", "domain", "platform/log"]),
    may("providers", ["domain", "platform/log"]),
    may("features", ["features", "platform/rest", "platform/transport", "platform/log", "outbox", "db", "domain", "i18n", "providers"]),
    {
      name: "feature-through-index",
      comment: "a feature reaches another feature only through its index.ts",
      severity: "error",
      from: { path: "^src/features/([^/]+)/" },
      to: { path: "^src/features/", pathNot: ["^src/features/$1/", "^src/features/[^/]+/index\\.ts$"] },
    },
    {
      name: "provider-through-index",
      comment: "a feature reaches a provider only through the providers' shared modules, never one provider's folder",
      severity: "error",
      from: { path: "^src/(features|app)/" },
      to: { path: "^src/providers/[^/]+/" , pathNot: ["^src/providers/[^/]+/index\\.ts$"] },
    },
    {
      name: "provider-alone",
      comment: "a provider folder uses only itself and the providers' shared modules, so it can be added or removed alone",
      severity: "error",
      from: { path: "^src/providers/([^/]+)/" },
      to: { path: "^src/providers/", pathNot: ["^src/providers/$1/", "^src/providers/shared/"] },
    },
    { name: "no-circular", severity: "error", from: { path: "^src/" }, to: { circular: true } },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^gen/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
  },
};
