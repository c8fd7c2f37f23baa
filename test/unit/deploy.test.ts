// The Dockerfile and compose.yaml stay in step with package.json and the code (no Docker engine here to build them).
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const read = (p: string) => readFileSync(join(ROOT, p), "utf8");
const pkg = JSON.parse(read("package.json")) as { scripts: Record<string, string> };

/** Instructions of the Dockerfile's last stage, continuation lines joined. */
function runtimeStage(): string[] {
  const lines = read("Dockerfile").replace(/\\\n\s*/g, " ").split("\n").map((l) => l.trim()).filter((l) => l !== "" && !l.startsWith("#"));
  const from = lines.map((l, i) => (l.startsWith("FROM ") ? i : -1)).filter((i) => i >= 0);
  expect(from.length).toBeGreaterThanOrEqual(2);
  return lines.slice(from[from.length - 1]);
}

function files(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const p = join(dir, name);
    return statSync(join(ROOT, p)).isDirectory() ? files(p) : [p];
  });
}

describe("Dockerfile", () => {
  const stage = runtimeStage();

  it("installs production dependencies only, runs as a non-root user, and starts like npm run start:prod", () => {
    expect(stage.some((l) => /^RUN npm ci --omit=dev\b/.test(l))).toBe(true);
    const user = stage.filter((l) => l.startsWith("USER "));
    expect(user).toEqual(["USER node"]);
    expect(stage.findIndex((l) => l.startsWith("USER "))).toBeLessThan(stage.findIndex((l) => l.startsWith("CMD ")));
    const cmd = JSON.parse(stage.find((l) => l.startsWith("CMD "))!.slice(4)) as string[];
    // The script execs node so that npm's signals reach it; the container runs node as PID 1 directly, with the
    // allocator settings the script gives it as ENVs.
    const allocator = "MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX:-2} MALLOC_MMAP_THRESHOLD_=${MALLOC_MMAP_THRESHOLD_:-131072}";
    expect(`${allocator} exec ${cmd.join(" ")}`).toBe(pkg.scripts["start:prod"]);
    expect(stage.some((l) => /\bMALLOC_ARENA_MAX=2\b/.test(l))).toBe(true);
    expect(stage.some((l) => /\bMALLOC_MMAP_THRESHOLD_=131072\b/.test(l))).toBe(true);
    expect(stage).toContain("EXPOSE 8080");
    expect(stage.some((l) => l.startsWith("HEALTHCHECK ") && l.includes("/healthz"))).toBe(true);
  });

  it("builds dist/ and copies it, and the build compiles every directory the running code imports from, and the admin CLI", () => {
    const build = read("Dockerfile").split(/^FROM /m)[1];
    expect(build).toMatch(/^RUN .*&& npm run build$/m);
    const copied = stage.filter((l) => l.startsWith("COPY --from=build")).map((l) => l.split(/\s+/)[2]);
    expect(copied).toEqual(["/app/dist"]);
    const compiled = (JSON.parse(read("tsconfig.build.json")) as { include: string[] }).include;
    const imported = new Set<string>();
    for (const f of [...files("src"), "scripts/admin.ts"]) {
      for (const m of read(f).matchAll(/from "(\.{1,2}\/[^"]+)"/g)) {
        const target = join(f, "..", m[1]);
        imported.add(target.split("/")[0]);
      }
    }
    for (const dir of imported) expect(compiled, dir).toContain(dir === "scripts" ? "scripts/admin.ts" : dir);
    expect(compiled).toContain("scripts/admin.ts");
    expect(pkg.scripts.admin).toBe("node --import tsx scripts/admin.ts");
    expect(pkg.scripts["admin:prod"]).toBe("node dist/scripts/admin.js");
    expect(pkg.scripts["start:prod"]).toMatch(/^MALLOC_ARENA_MAX=\S+ MALLOC_MMAP_THRESHOLD_=\S+ exec node (--\S+ )*dist\/src\/app\/main\.js$/);
  });
});

describe("compose.yaml", () => {
  const compose = parse(read("compose.yaml")) as { services: Record<string, Record<string, unknown>> };

  it("runs MongoDB 7 as a one-member replica set that the service waits for", () => {
    const mongo = compose.services.mongo as { image: string; command: string[]; healthcheck: { test: string[] } };
    expect(mongo.image).toBe("mongo:7");
    expect(mongo.command).toEqual(["mongod", "--replSet", "rs0", "--bind_ip_all"]);
    const check = mongo.healthcheck.test.join(" ");
    expect(check).toContain('rs.initiate({ _id: "rs0", members: [{ _id: 0, host: "mongo:27017" }] })');
    expect(check).toContain("isWritablePrimary");
    const app = compose.services.app as { build: string; depends_on: Record<string, { condition: string }>; environment: Record<string, string> };
    expect(app.build).toBe(".");
    expect(app.depends_on).toEqual({ mongo: { condition: "service_healthy" } });
    expect(app.environment.MONGODB_URI).toBe("mongodb://mongo:27017/scheduling?replicaSet=rs0");
    // Required: compose refuses to start without them instead of running with a throwaway key.
    expect(app.environment.API_KEY_SECRET).toMatch(/^\$\{API_KEY_SECRET:\?/);
    expect(app.environment.ADMIN_TOKEN).toMatch(/^\$\{ADMIN_TOKEN:\?/);
    expect(JSON.stringify(compose)).not.toMatch(/\$\(/);
  });
});

/**
 * Every environment variable the service reads: `env.NAME` in src/, a provider's endpoints (`endpointSetting(env,
 * "NAME", ...)`, src/providers/<name>/settings.ts) and OAuth client pairs (`clientSetting(env, "PREFIX")`, or
 * config.ts's `parseClient("PREFIX")`) as `<PREFIX>_CLIENT_ID` and `_CLIENT_SECRET`.
 */
function settingsTheServiceReads(): string[] {
  const names = new Set<string>();
  for (const f of files("src")) {
    const text = read(f);
    for (const m of text.matchAll(/\benv\.([A-Z][A-Z0-9_]+)/g)) names.add(m[1]);
    for (const m of text.matchAll(/endpointSetting\(env, "([A-Z][A-Z0-9_]+)"/g)) names.add(m[1]);
    for (const m of text.matchAll(/(?:parseClient\(|clientSetting\(env, )"([A-Z]+)"/g)) names.add(`${m[1]}_CLIENT_ID`).add(`${m[1]}_CLIENT_SECRET`);
  }
  return [...names].sort();
}

describe("scheduling.env: every setting, with its default", () => {
  const lines = read("scheduling.env").split("\n");
  const named = new Map(lines.flatMap((l) => {
    const m = /^#? ?([A-Z][A-Z0-9_]*)=(.*)$/.exec(l);
    return m ? [[m[1], m[2]] as const] : [];
  }));

  it("parses as an env file: comments, blank lines and KEY=value lines, every setting commented so the defaults hold", () => {
    for (const line of lines) expect(line, line).toMatch(/^(#.*|[A-Z][A-Z0-9_]*=.*|)$/);
    // A value set in the file would override the image's defaults for everyone who uses it.
    expect(lines.filter((l) => /^[A-Z]/.test(l))).toEqual([]);
  });

  it("names every setting the service reads, and each is documented in docs/configuration.md", () => {
    const read_ = settingsTheServiceReads();
    expect(read_.length).toBeGreaterThan(40);
    const documented = read("docs/configuration.md");
    for (const name of read_) {
      expect(named.has(name), `${name} is read by src/ but missing from scheduling.env`).toBe(true);
      expect(documented, `${name} is missing from docs/configuration.md`).toContain(`\`${name}\``);
    }
    for (const name of named.keys()) expect(read_, `scheduling.env names ${name}, which nothing reads`).toContain(name);
  });

  it("is the env file compose's service reads; compose keeps the secrets required, and publishes on this machine only", () => {
    const compose = parse(read("compose.yaml")) as { services: { app: { env_file: string; ports: string[]; environment: Record<string, string> } } };
    expect(compose.services.app.env_file).toBe("scheduling.env");
    // Anything compose's environment sets wins over the file: only the database and the two secrets may be there.
    expect(Object.keys(compose.services.app.environment).sort()).toEqual(["ADMIN_TOKEN", "API_KEY_SECRET", "MONGODB_URI"]);
    expect(compose.services.app.ports).toEqual(["${BIND_ADDRESS:-127.0.0.1}:${PORT:-8080}:8080"]);
  });
});

describe("docs/operations.md: the image alone", () => {
  it("is run with an ADMIN_TOKEN, the env file, and a volume for DATA_DIR", () => {
    const runs = read("docs/operations.md").split("\n").filter((l) => /^docker run /.test(l.trim()));
    expect(runs.length).toBeGreaterThan(0);
    for (const run of runs) {
      expect(run).toMatch(/-e ADMIN_TOKEN\b/);
      expect(run).toContain("--env-file scheduling.env");
      expect(run).toMatch(/-v [\w-]+:\/data\b/);
    }
    expect(runtimeStage()).toContain("ENV DATA_DIR=/data");
  });
});

