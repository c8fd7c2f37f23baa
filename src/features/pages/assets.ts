// The pages' script and stylesheet: bundled by esbuild (into dist at build time, else in memory once per process) under content-hashed names.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { AssetNames } from "./pages.js";

interface Asset {
  body: Buffer;
  contentType: string;
}

export interface Assets {
  names: AssetNames;
  get(name: string): Asset | undefined;
}

interface Manifest {
  script: string;
  style: string;
}

const CONTENT_TYPES: Record<string, string> = { js: "text/javascript; charset=utf-8", css: "text/css; charset=utf-8" };

/** Where `npm run build` leaves the bundles: dist/web-assets beside dist/src (this file is dist/src/features/pages/assets.js there). */
const PREBUILT = fileURLToPath(new URL("../../../web-assets/", import.meta.url));
const SOURCES = fileURLToPath(new URL("./client/", import.meta.url));

function hashedName(base: string, ext: string, body: Buffer): string {
  return `${base}.${createHash("sha256").update(body).digest("hex").slice(0, 12)}.${ext}`;
}

/** Bundles src/features/pages/client (main.ts and style.css), minified, with no reference to anything off this origin. */
async function bundle(): Promise<Map<string, Buffer> & { manifest?: Manifest }> {
  // Loaded only when bundling: a compiled deployment with prebuilt assets never needs esbuild at run time.
  const { build } = await import("esbuild");
  const common = { bundle: true, minify: true, write: false, logLevel: "silent", legalComments: "none" } as const;
  const [js, css] = await Promise.all([
    build({ ...common, entryPoints: [`${SOURCES}main.ts`], format: "iife", target: "es2020", platform: "browser" }),
    build({ ...common, entryPoints: [`${SOURCES}style.css`] }),
  ]);
  const script = Buffer.from(js.outputFiles[0].contents);
  const style = Buffer.from(css.outputFiles[0].contents);
  const files: Map<string, Buffer> & { manifest?: Manifest } = new Map();
  const manifest = { script: hashedName("booking", "js", script), style: hashedName("booking", "css", style) };
  files.set(manifest.script, script);
  files.set(manifest.style, style);
  files.manifest = manifest;
  return files;
}

/** `npm run build`: writes the bundles and their manifest under `dir`. */
export async function writeAssets(dir: string): Promise<Manifest> {
  const files = await bundle();
  // Bundles of earlier builds would only pile up: the manifest names the ones served.
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const [name, body] of files) writeFileSync(`${dir}/${name}`, body);
  writeFileSync(`${dir}/manifest.json`, JSON.stringify(files.manifest));
  return files.manifest!;
}

function fromFiles(names: Manifest, files: Map<string, Buffer>): Assets {
  return {
    names,
    get(name) {
      const body = files.get(name);
      if (!body) return undefined;
      return { body, contentType: CONTENT_TYPES[name.slice(name.lastIndexOf(".") + 1)] ?? "application/octet-stream" };
    },
  };
}

let loading: Promise<Assets> | undefined;

/** The assets of this process: the prebuilt ones when present, else bundled now (once; later calls share it). */
export function loadAssets(): Promise<Assets> {
  loading ??= (async () => {
    if (existsSync(`${PREBUILT}manifest.json`)) {
      const names = JSON.parse(readFileSync(`${PREBUILT}manifest.json`, "utf8")) as Manifest;
      const files = new Map([names.script, names.style].map((n) => [n, readFileSync(`${PREBUILT}${n}`)] as const));
      return fromFiles(names, files);
    }
    const files = await bundle();
    return fromFiles(files.manifest!, files);
  })();
  // A failed bundle is retried by the next request rather than remembered.
  loading.catch(() => (loading = undefined));
  return loading;
}
