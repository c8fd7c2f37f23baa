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
    // The log stamps its lines with the system clock (src/domain/clock.ts systemClock): the only time it reads.
    may("platform/log", ["domain/clock"]),
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
    {
      name: "pages-client-runs-in-the-browser",
      comment:
        "the visitors' script (src/features/pages/client) reaches only what runs in the browser: not the url rules and their Unicode tables (issue 41: 111 KB of look-alike data once rode along through domain/user.ts), nor the database, the transport or a feature's server side",
      severity: "error",
      from: { path: "^src/features/pages/client/" },
      to: {
        path: ["^src/domain/(user|urlKey|uts39|uts39Data|errors)\\.ts$", "^src/(db|platform|outbox|providers|app)/", "^src/features/(?!pages/(client|shared)/)"],
        reachable: true,
      },
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
