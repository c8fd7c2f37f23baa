// The client packages built from proto/ (npm run clients) install outside the repository into clean environments, with the newest releases of their dependencies and the oldest they declare, load every generated module and work against a fresh server; their READMEs' examples run as written.
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { buildClients, protoFilesOf, PYTHON, pythonTools } from "../../scripts/build-clients.js";
import { runWalkthrough } from "../../scripts/readme-walkthrough.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const DIST = join(ROOT, "clients/dist");
const read = (file: string) => ({ file, text: readFileSync(join(ROOT, file), "utf8") });
const run = async (command: string, args: string[]) => (await promisify(execFile)(command, args, { cwd: ROOT, encoding: "utf8" })).stdout;

/** Every service proto/scheduling/v1 declares, by name: what each package must have a client for. */
const SERVICES = readdirSync(join(ROOT, "proto/scheduling/v1"))
  .filter((f) => f.endsWith(".proto"))
  .flatMap((f) => [...readFileSync(join(ROOT, "proto/scheduling/v1", f), "utf8").matchAll(/^service (\w+)/gm)].map((m) => m[1]))
  .sort();

/** A walk-through page made of these shell lines, run in the same session after a README's. */
const page = (file: string, lines: string[]) => ({ file, text: ["<!-- walkthrough -->", "```sh", ...lines, "```", "<!-- /walkthrough -->"].join("\n") });

/** The service as the repository's README starts it, which is what the packages' READMEs ask for. */
const QUICK_START = page("(the README's quick start)", ["ADMIN_TOKEN=dev-admin-token npm start", "curl -s localhost:8080/healthz", '# → 200 {"status":"ok"}']);

/** Checks made in the directory the shell is in: it is outside the clone. */
const OUTSIDE = 'test "${PWD#"$CLONE"}" = "$PWD"';

/** A new empty directory outside the clone, for an environment of its own. */
const FRESH_DIRECTORY = ['cd "$(mktemp -d)"', OUTSIDE];

/** Runs the pages as one walk-through session; its problems and everything the commands printed. */
async function walk(pages: { file: string; text: string }[]): Promise<{ report: string[]; printed: string }> {
  const printed: string[] = [];
  const { report } = await runWalkthrough(pages, (line) => printed.push(line));
  return { report, printed: printed.join("\n") };
}

/** The client names a line `services [...]` printed. */
const servicesPrinted = (printed: string): unknown => JSON.parse(/^\s*services (\[.*\])$/m.exec(printed)?.[1] ?? "null");

/** What a check program (test/node/client_test.mjs, test/python/client_test.py) printed under `label`. */
function checked(printed: string, label: string): Record<string, unknown> {
  const line = new RegExp(`^\\s*client-check ${label} (\\{.*\\})$`, "m").exec(printed);
  expect(line, `the check "${label}" printed nothing:\n${printed.slice(-3000)}`).not.toBeNull();
  return JSON.parse(line![1]) as Record<string, unknown>;
}

/**
 * How the test's own virtual environments (the oldest releases, protobuf 6) are made and filled, as shell lines
 * run in the folder that gets `venv`. The README's own environment is made as the README says. These are made
 * without pip of their own and filled by the pip of the build's tools environment (`pip --python`, pip 22.3+):
 * ensurepip's copy of pip costs about 3 s of CPU per environment, and the environment gets the same packages
 * either way. With an older pip there (a Python whose bundled pip predates 22.3), as the README makes one.
 */
async function pythonEnvironments(): Promise<{ create: string; pip: string }> {
  const tools = await pythonTools();
  const pip = (await run(tools, ["-c", "import pip; print(pip.__version__)"])).trim();
  if (olderThan(pip, "22.3")) return { create: `${PYTHON} -m venv venv`, pip: "venv/bin/pip" };
  return { create: `${PYTHON} -m venv --without-pip venv`, pip: `"$CLONE"/${relative(ROOT, tools)} -m pip --python venv/bin/python` };
}

/** `a.b.c` is older than `x.y.z`. */
const olderThan = (a: string, b: string): boolean => a.localeCompare(b, "en", { numeric: true }) < 0;

/**
 * The oldest version each dependency may have: the lower bound of its range (npm's `^2.13.0`, pip's
 * `protobuf<8,>=7.36.2`). A dependency without one cannot be installed at "the oldest it declares": it fails here.
 */
function oldestOf(requirements: [string, string][]): Record<string, string> {
  return Object.fromEntries(
    requirements.map(([name, range]) => {
      const bound = /(?:^|,)\s*(?:\^|~|>=|==|~=)?\s*(\d+\.\d+\.\d+)/.exec(range)?.[1];
      expect(bound, `${name} ${range}: no lower bound`).toBeDefined();
      return [name, bound!];
    }),
  );
}

const scratch: string[] = [];
afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

describe("the client packages (npm run clients)", () => {
  it("TypeScript: the packed .tgz installs outside the clone with the newest dependencies (its README's example books a time) and with the oldest it declares; each loads every generated file and calls every protocol, one call refused", async () => {
    const [tgz] = await buildClients(DIST, ["typescript"]);
    expect(tgz).toMatch(/\/scheduling-service-client-\d+\.\d+\.\d+\.tgz$/);
    const manifest = JSON.parse(await run("tar", ["-xzOf", tgz, "package/package.json"])) as { dependencies: Record<string, string> };
    const oldest = oldestOf(Object.entries(manifest.dependencies));
    const check = (label: string) => `ADMIN_TOKEN=dev-admin-token node "$CLONE"/test/node/client_test.mjs http://localhost:8080 ${label}`;
    const { report, printed } = await walk([
      QUICK_START,
      read("clients/typescript/README.md"),
      page("(checks of the package as the README installed it)", [
        OUTSIDE,
        check("newest"),
        `node --input-type=module -e 'const { createSchedulingClients } = await import("@scheduling-service/client"); console.log("services", JSON.stringify(Object.keys(createSchedulingClients({ baseUrl: "http://localhost:8080" })).sort()))'`,
        // The .d.ts files type a consumer's program: a right field compiles, a wrong one is an error (were the
        // clients untyped, the @ts-expect-error would be unused, itself an error).
        `cat > typed.mts <<'EOF'`,
        `import { createSchedulingClients, type SchedulingClients } from "@scheduling-service/client";`,
        `const api: SchedulingClients = createSchedulingClients({ baseUrl: "http://localhost:8080", apiKey: "k", protocol: "connect" });`,
        `export const key: Promise<string | undefined> = api.UserService.getUser({}).then((r) => r.user?.apiKey);`,
        `// @ts-expect-error: no such field`,
        `export const wrong = api.EventService.listEvents({}).then((r) => r.eventz);`,
        `EOF`,
        `"$CLONE"/node_modules/.bin/tsc --noEmit --strict --skipLibCheck --module nodenext --moduleResolution nodenext typed.mts`,
      ]),
      page("(the package with the oldest dependencies it declares)", [
        ...FRESH_DIRECTORY,
        "npm init -y > /dev/null",
        `npm install --save-exact "$CLONE"/clients/dist/scheduling-service-client-*.tgz ${Object.entries(oldest).map(([name, version]) => `${name}@${version}`).join(" ")}`,
        check("oldest"),
      ]),
    ]);
    expect(report).toEqual([]);
    expect(printed).toMatch(/^\s*\/[a-z0-9-]+\/intro: confirmed at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/m);
    expect(servicesPrinted(printed)).toEqual(SERVICES);
    const files = protoFilesOf("typescript").map((f) => `file_${f.replace(/\.proto$/, "").replace(/[/.]/g, "_")}`);
    const [newest, old] = [checked(printed, "newest"), checked(printed, "oldest")];
    for (const seen of [newest, old]) expect(seen).toMatchObject({ files, refused: "Unauthenticated Invalid api_key", listed: 1 });
    expect(old.versions).toEqual(oldest);
    for (const [name, version] of Object.entries(oldest)) expect(olderThan((newest.versions as Record<string, string>)[name], version), name).toBe(false);
    console.log(`TypeScript client: newest ${JSON.stringify(newest.versions)}, oldest ${JSON.stringify(old.versions)}`);
  }, 400_000);

  it("Python: the wheel installs outside the clone into new virtual environments with the newest protobuf, grpcio and googleapis-common-protos (its README's example books a time) and with the oldest it declares; each loads every generated module without a warning and calls the service, one call refused; the descriptors load in protobuf 6 too", async () => {
    const [wheel] = await buildClients(DIST, ["python"]);
    expect(wheel).toMatch(/\/scheduling_service_client-\d+\.\d+\.\d+-py3-none-any\.whl$/);
    const requires = JSON.parse(
      await run(PYTHON, ["-c", "import json, sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); m = next(n for n in z.namelist() if n.endswith('.dist-info/METADATA')); print(json.dumps([l.split(': ', 1)[1] for l in z.read(m).decode().splitlines() if l.startswith('Requires-Dist: ')]))", wheel]),
    ) as string[];
    const declared = requires.map((r) => /^([\w.-]+)\s*(.*)$/.exec(r)!.slice(1, 3) as [string, string]);
    expect(declared.map(([name]) => name).sort()).toEqual(["googleapis-common-protos", "grpcio", "protobuf"]);
    const oldest = oldestOf(declared);
    // The descriptors of every file of proto/ (the wheel's and the rest), for the runtime without the wheel.
    const dir = mkdtempSync(join(tmpdir(), "descriptors-"));
    scratch.push(dir);
    const set = join(dir, "proto.binpb");
    await run(join(ROOT, "node_modules/.bin/buf"), ["build", "--as-file-descriptor-set", "-o", set]);
    const check = (label: string) => `ADMIN_TOKEN=dev-admin-token venv/bin/python "$CLONE"/test/python/client_test.py localhost:8080 ${label}`;
    const venv = await pythonEnvironments();
    const { report, printed } = await walk([
      QUICK_START,
      read("clients/python/README.md"),
      page("(checks of the wheel as the README installed it)", [
        OUTSIDE,
        check("newest"),
        `venv/bin/python -c 'import json, scheduling_client; c = scheduling_client.connect(); print("services", json.dumps(sorted(n for n in vars(c) if n != "channel")))'`,
        `venv/bin/python "$CLONE"/test/python/load_descriptors.py ${set}`,
      ]),
      page("(the wheel with the oldest releases it declares)", [
        ...FRESH_DIRECTORY,
        venv.create,
        `${venv.pip} install --quiet "$CLONE"/clients/dist/scheduling_service_client-*.whl ${Object.entries(oldest).map(([name, version]) => `${name}==${version}`).join(" ")}`,
        check("oldest"),
      ]),
      page("(protobuf 6, without the wheel: its code is generated for protobuf 7, the descriptors load in both)", [
        ...FRESH_DIRECTORY,
        venv.create,
        `${venv.pip} install --quiet 'protobuf>=6,<7'`,
        `venv/bin/python "$CLONE"/test/python/load_descriptors.py ${set}`,
      ]),
    ]);
    expect(report).toEqual([]);
    expect(printed).toMatch(/^\s*\/[a-z0-9-]+\/intro: confirmed at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/m);
    expect(servicesPrinted(printed)).toEqual(SERVICES);
    const modules = protoFilesOf("python").flatMap((f) => ["_pb2", "_pb2_grpc"].map((suffix) => f.replace(/\.proto$/, suffix).replaceAll("/", "."))).sort();
    const [newest, old] = [checked(printed, "newest"), checked(printed, "oldest")];
    for (const seen of [newest, old]) expect(seen).toMatchObject({ modules, warnings: [], refused: "UNAUTHENTICATED Invalid api_key", listed: 1 });
    expect(old.versions).toEqual({ protobuf: oldest.protobuf, grpcio: oldest.grpcio });
    for (const name of ["protobuf", "grpcio"]) expect(olderThan((newest.versions as Record<string, string>)[name], oldest[name]), name).toBe(false);
    // Every file of proto/ loads into protobuf 7 (the README's environment) and 6.
    const loaded = [...printed.matchAll(/^\s*descriptors (\d+)\.[\d.]+ (\d+) (\d+)$/gm)].map((m) => m[1]);
    expect(loaded).toEqual(["7", "6"]);
    console.log(`Python client: newest ${JSON.stringify(newest.versions)}, oldest ${JSON.stringify(old.versions)}`);
  }, 400_000);
});
