// `npm run clients`: builds the installable clients from proto/ into clients/dist: the npm package of clients/typescript (Connect-ES) and the wheel of clients/python (grpcio).
/*
 * Usage: npm run clients [-- [typescript] [python] [--out DIR]]    (both, into clients/dist, unless told)
 *
 * Each package is assembled in a staging copy under .tmp/ (its committed files, plus the code buf generates from
 * proto/ right now, so a service added there is in the next build without an edit here), built there, and its
 * artifact renamed into the output folder: nothing generated lands in the source tree, and two builds at once
 * (a test and a reader) never see each other's half-written files. Both take the version of the root package.json:
 * a client is as new as the contract it was generated from.
 *   - typescript: protoc-gen-es (clients/typescript/buf.gen.yaml: JavaScript and .d.ts), tsc for the entry, `npm pack`:
 *     scheduling-service-client-<version>.tgz.
 *   - python: Debian's protoc and grpc_python_plugin (clients/python/buf.gen.yaml), then `pip wheel` with Debian's
 *     setuptools, offline (--no-index, --no-build-isolation): scheduling_service_client-<version>-py3-none-any.whl.
 */
import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const BIN = join(ROOT, "node_modules/.bin");
// Debian's python3-grpcio, python3-protobuf and setuptools are installed for the system interpreter, not for a
// pyenv or venv one found first on PATH.
const PYTHON = "/usr/bin/python3";
const PYTHON_PACKAGES = "protobuf-compiler protobuf-compiler-grpc python3-grpcio python3-protobuf python3-pip python3-setuptools python3-wheel python3-venv";

/** A tool's output; it fails with the tool's stdout and stderr on the error. Not synchronous: a test runs this. */
const run = async (command: string, args: string[], cwd = ROOT): Promise<string> => (await promisify(execFile)(command, args, { cwd, encoding: "utf8", maxBuffer: 16 << 20 })).stdout;

/** Copies a client's committed files (all but its buf template) into the staging folder and generates its code there. */
async function stage(client: "typescript" | "python", into: string): Promise<string> {
  const dir = join(into, client);
  cpSync(join(ROOT, "clients", client), dir, { recursive: true, filter: (src) => !src.endsWith("buf.gen.yaml") });
  await run(join(BIN, "buf"), ["generate", "--template", `clients/${client}/buf.gen.yaml`, "--output", dir]);
  return dir;
}

/** The files under `dir` whose names end with `suffix`, as paths relative to it, in order. */
function filesEnding(dir: string, suffix: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith(suffix)).sort();
}

async function buildTypescript(into: string, version: string): Promise<string> {
  const dir = await stage("typescript", into);
  // One module re-exporting every generated file (JavaScript and its declarations): the entry finds the services in it.
  const gen = join(dir, "src/gen");
  const reexports = filesEnding(gen, "_pb.js").map((f) => `export * from "./${f}";\n`).join("");
  for (const name of ["index.js", "index.d.ts"]) writeFileSync(join(gen, name), reexports);
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version: string };
  writeFileSync(join(dir, "package.json"), `${JSON.stringify({ ...manifest, version }, null, 2)}\n`);
  // tsc compiles the entry against the generated declarations; the generated files go into dist/ as they are.
  await run(join(BIN, "tsc"), ["-p", join(dir, "tsconfig.json")]);
  cpSync(gen, join(dir, "dist/gen"), { recursive: true });
  const [packed] = JSON.parse(await run("npm", ["pack", "--json", "--pack-destination", into], dir)) as { filename: string }[];
  return join(into, packed.filename);
}

async function buildPython(into: string, version: string): Promise<string> {
  for (const tool of ["protoc", "grpc_python_plugin", PYTHON]) {
    try {
      await run("sh", ["-c", `command -v ${tool}`]);
    } catch {
      throw new Error(`the Python client needs ${tool}; install with: apt-get install ${PYTHON_PACKAGES}`);
    }
  }
  const dir = await stage("python", into);
  for (const pkg of ["scheduling", "scheduling/v1"]) writeFileSync(join(dir, pkg, "__init__.py"), "");
  const pyproject = join(dir, "pyproject.toml");
  writeFileSync(pyproject, readFileSync(pyproject, "utf8").replace(/^version = ".*"$/m, `version = "${version}"`));
  const wheels = join(into, "wheels");
  await run(PYTHON, ["-m", "pip", "wheel", "--quiet", "--no-deps", "--no-index", "--no-build-isolation", "--wheel-dir", wheels, dir]);
  const [wheel] = filesEnding(wheels, ".whl");
  return join(wheels, wheel);
}

const BUILDS = { typescript: buildTypescript, python: buildPython };

/** Builds the clients named (both when none is) into `out`; the artifacts' paths. */
export async function buildClients(out: string, clients: (keyof typeof BUILDS)[] = ["typescript", "python"]): Promise<string[]> {
  const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
  mkdirSync(join(ROOT, ".tmp"), { recursive: true });
  mkdirSync(out, { recursive: true });
  const staging = mkdtempSync(join(ROOT, ".tmp", "clients-"));
  try {
    const artifacts: string[] = [];
    for (const client of clients) {
      const artifact = await BUILDS[client](staging, version);
      const target = join(out, basename(artifact));
      // One version of each package in the folder, so that the READMEs' `clients/dist/<name>-*` names one file.
      const stem = basename(artifact).slice(0, basename(artifact).indexOf(`-${version}`) + 1);
      for (const old of readdirSync(out)) if (old.startsWith(stem) && old !== basename(target) && !old.endsWith(".part")) rmSync(join(out, old), { force: true });
      // A rename replaces the file whole; .tmp/ is on the repository's file system, and where `out` is not, the
      // copy goes next to the target first.
      try {
        renameSync(artifact, target);
      } catch {
        cpSync(artifact, `${target}.${process.pid}.part`);
        renameSync(`${target}.${process.pid}.part`, target);
      }
      artifacts.push(target);
    }
    return artifacts;
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const at = args.indexOf("--out");
  const out = at >= 0 ? args.splice(at, 2)[1] : join(ROOT, "clients/dist");
  const unknown = args.filter((a) => !(a in BUILDS));
  if (unknown.length > 0 || out === undefined) {
    console.error(`usage: npm run clients [-- [typescript] [python] [--out DIR]] (not: ${unknown.join(" ")})`);
    process.exit(2);
  }
  try {
    for (const artifact of await buildClients(resolve(out), args.length > 0 ? (args as (keyof typeof BUILDS)[]) : undefined)) console.log(artifact);
  } catch (err) {
    // A tool's own words: tsc reports on stdout, pip and buf on stderr.
    const { stdout, stderr } = err as { stdout?: string; stderr?: string };
    console.error(`npm run clients: ${(err as Error).message.split("\n")[0]}\n${[stdout, stderr].filter(Boolean).join("\n").trim()}`);
    process.exit(1);
  }
}
