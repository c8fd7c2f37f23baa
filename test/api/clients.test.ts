// The client packages built from proto/ (npm run clients) install from their files in an empty directory outside the repository as their READMEs say, and the READMEs' examples work against a fresh server.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { buildClients } from "../../scripts/build-clients.js";
import { runWalkthrough } from "../../scripts/readme-walkthrough.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const DIST = join(ROOT, "clients/dist");
const read = (file: string) => ({ file, text: readFileSync(join(ROOT, file), "utf8") });

/** Every service proto/scheduling/v1 declares, by name: what each package must have a client for. */
const SERVICES = readdirSync(join(ROOT, "proto/scheduling/v1"))
  .filter((f) => f.endsWith(".proto"))
  .flatMap((f) => [...readFileSync(join(ROOT, "proto/scheduling/v1", f), "utf8").matchAll(/^service (\w+)/gm)].map((m) => m[1]))
  .sort();

/** A walk-through page made of these shell lines, run in the same session after a README's. */
const page = (file: string, lines: string[]) => ({ file, text: ["<!-- walkthrough -->", "```sh", ...lines, "```", "<!-- /walkthrough -->"].join("\n") });

/** The service as the repository's README starts it, which is what the packages' READMEs ask for. */
const QUICK_START = page("(the README's quick start)", ["ADMIN_TOKEN=dev-admin-token npm start", "curl -s localhost:8080/healthz", '# → 200 {"status":"ok"}']);

/** Checks made in the directory the README's example left the shell in: it is outside the clone. */
const OUTSIDE = 'test "${PWD#"$CLONE"}" = "$PWD"';

/** Runs the pages as one walk-through session; its problems and everything the commands printed. */
async function walk(pages: { file: string; text: string }[]): Promise<{ report: string[]; printed: string }> {
  const printed: string[] = [];
  const { report } = await runWalkthrough(pages, (line) => printed.push(line));
  return { report, printed: printed.join("\n") };
}

/** The client names a line `services [...]` printed. */
const servicesPrinted = (printed: string): unknown => JSON.parse(/^\s*services (\[.*\])$/m.exec(printed)?.[1] ?? "null");

// Debian's python3-grpcio is installed for the system interpreter, not for a pyenv or venv one found first on PATH.
const PYTHON = "/usr/bin/python3";
const INSTALL = "apt-get install protobuf-compiler protobuf-compiler-grpc python3-grpcio python3-protobuf python3-pip python3-setuptools python3-wheel python3-venv";

/** Why the Python client cannot be built and installed here, or undefined when it can. */
function pythonMissing(): string | undefined {
  const tries: [string, string[], string][] = [
    ["protoc", ["--version"], "protoc (protobuf-compiler)"],
    ["sh", ["-c", "command -v grpc_python_plugin"], "grpc_python_plugin (protobuf-compiler-grpc)"],
    [PYTHON, ["-c", "import setuptools, wheel, ensurepip, grpc, google.protobuf"], `setuptools, wheel, venv, grpc and protobuf for ${PYTHON}`],
    [PYTHON, ["-m", "pip", "--version"], `pip for ${PYTHON} (python3-pip)`],
  ];
  for (const [cmd, args, what] of tries) {
    try {
      execFileSync(cmd, args, { stdio: "ignore" });
    } catch {
      return `${what} not available; install with: ${INSTALL}`;
    }
  }
  return undefined;
}

const pythonReason = pythonMissing();
const inCi = ["true", "1"].includes(process.env.CI ?? "");
if (pythonReason && !inCi) console.warn(`the Python client's test skipped: ${pythonReason}`);

describe("the client packages (npm run clients)", () => {
  it("TypeScript: the packed .tgz installs in an empty directory outside the clone, its README example books a time, and it has a client for every service of proto/, with types", async () => {
    const [tgz] = await buildClients(DIST, ["typescript"]);
    expect(tgz).toMatch(/\/scheduling-service-client-\d+\.\d+\.\d+\.tgz$/);
    const { report, printed } = await walk([
      QUICK_START,
      read("clients/typescript/README.md"),
      page("(checks of the installed package)", [
        OUTSIDE,
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
    ]);
    expect(report).toEqual([]);
    expect(printed).toMatch(/^\s*\/[a-z0-9-]+\/intro: confirmed at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/m);
    expect(servicesPrinted(printed)).toEqual(SERVICES);
  }, 300_000);

  it.skipIf(pythonReason !== undefined && !inCi)(
    "Python: the wheel installs with pip --no-index (Debian's grpcio and protobuf, nothing from PyPI) in an empty directory outside the clone, its README example books a time, and it has a stub for every service of proto/",
    async () => {
      // In CI the toolchain is installed by .ci/run: its absence is a failure there, not a skip.
      expect(pythonReason, pythonReason).toBeUndefined();
      const [wheel] = await buildClients(DIST, ["python"]);
      expect(wheel).toMatch(/\/scheduling_service_client-\d+\.\d+\.\d+-py3-none-any\.whl$/);
      const { report, printed } = await walk([
        QUICK_START,
        read("clients/python/README.md"),
        page("(checks of the installed wheel)", [
          OUTSIDE,
          `venv/bin/python -c 'import json, scheduling_client; c = scheduling_client.connect(); print("services", json.dumps(sorted(n for n in vars(c) if n != "channel")))'`,
          // Its two dependencies are Debian's, not copies pip fetched into the environment.
          `venv/bin/python -c 'import grpc, google.protobuf; print("runtime", grpc.__file__, google.protobuf.__file__)'`,
          // The stubs over the wire in detail: an account, a wrong key's status and message, an event listed, the user.
          `ADMIN_TOKEN=dev-admin-token venv/bin/python "$CLONE"/test/python/client_test.py localhost:8080`,
        ]),
      ]);
      expect(report).toEqual([]);
      expect(printed).toMatch(/^\s*\/[a-z0-9-]+\/intro: confirmed at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/m);
      expect(servicesPrinted(printed)).toEqual(SERVICES);
      expect(printed).toMatch(/^\s*runtime \/usr\/lib\/python3\/dist-packages\/grpc\/__init__\.py \/usr\/lib\/python3\/dist-packages\/google\/protobuf\/__init__\.py$/m);
      expect(printed).toMatch(/"event_url": "python-chat-py-\d+-\d+", "listed": 1\}/);
    },
    300_000,
  );
});
