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
    // The script execs node so that npm's signals reach it; the container runs node as PID 1 directly.
    expect(`exec ${cmd.join(" ")}`).toBe(pkg.scripts["start:prod"]);
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
    expect(pkg.scripts["start:prod"]).toMatch(/^exec node (--\S+ )*dist\/src\/app\/main\.js$/);
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
