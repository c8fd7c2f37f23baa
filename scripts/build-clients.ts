// `npm run clients`: builds the installable clients from proto/ into clients/dist: the npm package of clients/typescript (Connect-ES) and the wheel of clients/python (grpcio), each with its ecosystem's standard generator.
/*
 * Usage: npm run clients [-- [typescript] [python] [--out DIR]]    (both, into clients/dist, unless told)
 *
 * Each package is assembled in a staging copy under .tmp/ (its committed files, plus the code generated from
 * proto/ right now, so a file or service added there is in the next build without an edit here), built there, and
 * its artifact renamed into the output folder: nothing generated lands in the source tree, and two builds at once
 * (a test and a reader) never see each other's half-written files. Both take the version of the root package.json:
 * a client is as new as the contract it was generated from.
 *   - typescript: protoc-gen-es through buf (clients/typescript/buf.gen.yaml: JavaScript and .d.ts), tsc for the
 *     entry, `npm pack`: scheduling-service-client-<version>.tgz.
 *   - python: grpcio-tools from Python's package index (its protoc with the Python, .pyi and gRPC generators), in a
 *     virtual environment the build makes itself under .tmp/ from clients/python/build-requirements.txt (once per
 *     requirements and interpreter; pip's own settings apply, a mirror included), then `pip wheel` with that
 *     environment's setuptools: scheduling_service_client-<version>-py3-none-any.whl. It needs Python 3.10+ with
 *     venv (`python3 -m venv`; Debian: python3-venv), nothing else from the system.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const BIN = join(ROOT, "node_modules/.bin");
const PROTO = join(ROOT, "proto");
/** The interpreter the Python client is built with (and tested with): the first python3 on PATH. */
export const PYTHON = "python3";
const NEEDS_PYTHON = "the Python client needs Python 3.10 or later with venv (`python3 -m venv`; on Debian: apt-get install python3-venv)";

/**
 * pip's settings for every pip this repository runs, over the machine's own (which stay: an index mirror, a cache):
 * two retries instead of five. A machine whose pip reaches a mirror but not pypi.org (an extra-index-url) otherwise
 * waits out five backed-off retries for every package, about 9 s each.
 */
export function pipEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...env, PIP_RETRIES: env.PIP_RETRIES ?? "2", PIP_DISABLE_PIP_VERSION_CHECK: "1" };
}

/** A tool's output; it fails with the tool's stdout and stderr on the error. Not synchronous: a test runs this. */
const run = async (command: string, args: string[], cwd = ROOT, env?: NodeJS.ProcessEnv): Promise<string> =>
  (await promisify(execFile)(command, args, { cwd, env, encoding: "utf8", maxBuffer: 16 << 20 })).stdout;

/**
 * The proto files a client is generated from, relative to proto/, in order: all but grpc/ (health and reflection
 * are for generic tools, and grpcio ships its own) and, for Python, google/ (the modules of google.protobuf and
 * google.rpc come with the protobuf and googleapis-common-protos packages the wheel depends on; a copy in the
 * wheel would overwrite theirs).
 */
export function protoFilesOf(client: "typescript" | "python"): string[] {
  const skipped = client === "python" ? ["grpc/", "google/"] : ["grpc/"];
  return (readdirSync(PROTO, { recursive: true }) as string[])
    .filter((f) => f.endsWith(".proto") && !skipped.some((dir) => f.startsWith(dir)))
    .sort();
}

/** Copies a client's committed files (all but its buf template) into the staging folder. */
function stage(client: "typescript" | "python", into: string): string {
  const dir = join(into, client);
  cpSync(join(ROOT, "clients", client), dir, { recursive: true, filter: (src) => !src.endsWith("buf.gen.yaml") && !src.endsWith("build-requirements.txt") });
  return dir;
}

/** The files under `dir` whose names end with `suffix`, as paths relative to it, in order. */
function filesEnding(dir: string, suffix: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith(suffix)).sort();
}

async function buildTypescript(into: string, version: string): Promise<string> {
  const dir = stage("typescript", into);
  const paths = protoFilesOf("typescript").flatMap((f) => ["--path", join("proto", f)]);
  await run(join(BIN, "buf"), ["generate", "--template", "clients/typescript/buf.gen.yaml", "--output", dir, ...paths]);
  // One module re-exporting every generated file (JavaScript and its declarations): the entry finds the services in
  // it. `export *` silently drops a name two files export, so two such files are an error here instead.
  const gen = join(dir, "src/gen");
  const files = filesEnding(gen, "_pb.js");
  const exporter = new Map<string, string>();
  for (const f of files) {
    for (const [, name] of readFileSync(join(gen, f), "utf8").matchAll(/^export const (\w+)/gm)) {
      const other = exporter.get(name);
      if (other !== undefined) throw new Error(`the TypeScript client would lose ${name}: both ${other} and ${f} export it`);
      exporter.set(name, f);
    }
  }
  const reexports = files.map((f) => `export * from "./${f}";\n`).join("");
  for (const name of ["index.js", "index.d.ts"]) writeFileSync(join(gen, name), reexports);
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version: string };
  writeFileSync(join(dir, "package.json"), `${JSON.stringify({ ...manifest, version }, null, 2)}\n`);
  // tsc compiles the entry against the generated declarations; the generated files go into dist/ as they are.
  await run(join(BIN, "tsc"), ["-p", join(dir, "tsconfig.json")]);
  cpSync(gen, join(dir, "dist/gen"), { recursive: true });
  const [packed] = JSON.parse(await run("npm", ["pack", "--json", "--pack-destination", into], dir)) as { filename: string }[];
  return join(into, packed.filename);
}

/**
 * The build's Python tools (grpcio-tools and setuptools, clients/python/build-requirements.txt) in a virtual
 * environment of its own: its interpreter's path. Made once per requirements and interpreter, under .tmp/: in a
 * folder of its own and renamed into place when complete, so a build that stopped half-way leaves nothing that
 * looks usable, and two builds at once each make one and keep the first (the environment is only ever run as
 * `<dir>/bin/python -m ...`, which works from its new place).
 */
export async function pythonTools(): Promise<string> {
  let interpreter: string;
  try {
    interpreter = await run(PYTHON, ["-c", "import sys, venv, ensurepip; assert sys.version_info >= (3, 10), sys.version; print(sys.executable, sys.version)"]);
  } catch (err) {
    const why = ((err as { stderr?: string }).stderr?.trim() || (err as Error).message).split("\n").pop();
    throw new Error(`${NEEDS_PYTHON}; ${PYTHON}: ${why}`);
  }
  const requirements = readFileSync(join(ROOT, "clients/python/build-requirements.txt"), "utf8");
  const key = createHash("sha256").update(interpreter).update(requirements).digest("hex").slice(0, 12);
  const dir = join(ROOT, ".tmp", `python-tools-${key}`);
  const python = join(dir, "bin/python");
  if (existsSync(python)) return python;
  const making = mkdtempSync(`${dir}.`);
  try {
    await run(PYTHON, ["-m", "venv", making]);
    await run(join(making, "bin/python"), ["-m", "pip", "install", "--quiet", "-r", join(ROOT, "clients/python/build-requirements.txt")], ROOT, pipEnv());
    try {
      renameSync(making, dir);
    } catch {
      // Another build put its own there first; that one serves.
    }
  } finally {
    rmSync(making, { recursive: true, force: true });
  }
  return python;
}

/** The lowest version a requirement (`protobuf>=7.36.2,<8`) allows, or undefined without a lower bound. */
const lowerBound = (requirement: string): string | undefined => /(?:>=|==|~=)\s*([\d.]+)/.exec(requirement)?.[1];

const isOlder = (a: string, b: string): boolean => {
  const [x, y] = [a, b].map((v) => v.split(".").map(Number));
  for (let i = 0; i < Math.max(x.length, y.length); i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) < (y[i] ?? 0);
  return false;
};

/**
 * Fails unless the wheel's declared lower bounds are at least what the generated code checks at import: the
 * protobuf runtime against its gencode version, grpcio against GRPC_GENERATED_VERSION. A newer grpcio-tools in
 * build-requirements.txt then cannot ship a wheel that promises older runtimes than it loads with.
 */
function checkBounds(generated: string, pyproject: string): void {
  const pb2 = filesEnding(generated, "_pb2.py")[0];
  const grpc = filesEnding(generated, "_pb2_grpc.py")[0];
  const needs = {
    protobuf: /^# Protobuf Python Version: ([\d.]+)$/m.exec(readFileSync(join(generated, pb2), "utf8"))?.[1],
    grpcio: /^GRPC_GENERATED_VERSION = '([\d.]+)'$/m.exec(readFileSync(join(generated, grpc), "utf8"))?.[1],
  };
  const declared = [.../^dependencies = \[([^\]]*)\]/m.exec(pyproject)![1].matchAll(/"([^"]+)"/g)].map((m) => m[1]);
  for (const [name, version] of Object.entries(needs)) {
    if (version === undefined) throw new Error(`no ${name} version found in the generated code (${pb2}, ${grpc})`);
    const requirement = declared.find((d) => d.split(/[<>=~!;[\s]/)[0] === name);
    const bound = requirement && lowerBound(requirement);
    if (!bound || isOlder(bound, version)) {
      throw new Error(`clients/python/pyproject.toml declares ${requirement ?? `no ${name}`}, but the generated code needs ${name}>=${version}`);
    }
  }
}

async function buildPython(into: string, version: string): Promise<string> {
  const python = await pythonTools();
  const dir = stage("python", into);
  // protoc as grpcio-tools ships it (its own copy of the well-known types is on the import path).
  await run(python, ["-m", "grpc_tools.protoc", `-I${PROTO}`, `--python_out=${dir}`, `--pyi_out=${dir}`, `--grpc_python_out=${dir}`, ...protoFilesOf("python")], PROTO);
  // Each generated folder a package (scheduling, scheduling.v1, ...), typed by its .pyi files (PEP 561).
  const packages = new Set(filesEnding(dir, "_pb2.py").map((f) => dirname(f)));
  for (const pkg of [...packages]) for (let p = pkg; p !== "."; p = dirname(p)) packages.add(p);
  for (const pkg of packages) writeFileSync(join(dir, pkg, "__init__.py"), "");
  for (const pkg of packages) if (!pkg.includes("/")) writeFileSync(join(dir, pkg, "py.typed"), "");
  const pyproject = join(dir, "pyproject.toml");
  const text = readFileSync(pyproject, "utf8");
  checkBounds(dir, text);
  writeFileSync(pyproject, text.replace(/^version = ".*"$/m, `version = "${version}"`));
  const wheels = join(into, "wheels");
  await run(python, ["-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "--wheel-dir", wheels, dir], ROOT, pipEnv());
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
    // A tool's own words: tsc reports on stdout, pip, protoc and buf on stderr.
    const { stdout, stderr } = err as { stdout?: string; stderr?: string };
    console.error(`npm run clients: ${(err as Error).message.split("\n")[0]}\n${[stdout, stderr].filter(Boolean).join("\n").trim()}`);
    process.exit(1);
  }
}
