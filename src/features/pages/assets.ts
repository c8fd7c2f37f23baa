// The pages' files: script and stylesheet bundled by esbuild under content-hashed names, the embed script and the favicon under fixed ones (into dist at build time, else in memory once per process).
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { faviconIco } from "./favicon.js";
import type { AssetNames } from "./pages.js";

interface Asset {
  body: Buffer;
  contentType: string;
  /** Whether the name holds the content's hash (else it is a fixed name others link to). */
  hashed: boolean;
}

export interface Assets {
  names: AssetNames;
  get(name: string): Asset | undefined;
}

interface Manifest {
  script: string;
  style: string;
}

const CONTENT_TYPES: Record<string, string> = { js: "text/javascript; charset=utf-8", css: "text/css; charset=utf-8", ico: "image/x-icon" };

/**
 * Files at names that never change: the favicon, at the root where browsers look, and the script an integrator's
 * page includes to size its iframes (docs/pages.md).
 */
const FIXED = ["favicon.ico", "embed.js"] as const;

/** Where `npm run build` leaves the bundles: dist/web-assets beside dist/src (this file is dist/src/features/pages/assets.js there). */
const PREBUILT = fileURLToPath(new URL("../../../web-assets/", import.meta.url));
const SOURCES = fileURLToPath(new URL("./client/", import.meta.url));

function hashedName(base: string, ext: string, body: Buffer): string {
  return `${base}.${createHash("sha256").update(body).digest("hex").slice(0, 12)}.${ext}`;
}

/** Bundles src/features/pages/client (main.ts, style.css, embed.ts), minified, with no reference to anything off this origin; draws the favicon. */
async function bundle(): Promise<Map<string, Buffer> & { manifest?: Manifest }> {
  // Loaded only when bundling: a compiled deployment with prebuilt assets never needs esbuild at run time.
  const { build } = await import("esbuild");
  const common = { bundle: true, minify: true, write: false, logLevel: "silent", legalComments: "none" } as const;
  const [js, css, embed, favicon] = await Promise.all([
    build({ ...common, entryPoints: [`${SOURCES}main.ts`], format: "iife", target: "es2020", platform: "browser" }),
    build({ ...common, entryPoints: [`${SOURCES}style.css`] }),
    // Runs in other sites' pages, whose browsers may be older than our visitors': plain ES2017.
    build({ ...common, entryPoints: [`${SOURCES}embed.ts`], format: "iife", target: "es2017", platform: "browser" }),
    faviconIco(),
  ]);
  const script = Buffer.from(js.outputFiles[0].contents);
  const style = Buffer.from(css.outputFiles[0].contents);
  const files: Map<string, Buffer> & { manifest?: Manifest } = new Map();
  const manifest = { script: hashedName("booking", "js", script), style: hashedName("booking", "css", style) };
  files.set(manifest.script, script);
  files.set(manifest.style, style);
  files.set("embed.js", Buffer.from(embed.outputFiles[0].contents));
  files.set("favicon.ico", favicon);
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
      return {
        body,
        contentType: CONTENT_TYPES[name.slice(name.lastIndexOf(".") + 1)] ?? "application/octet-stream",
        hashed: !(FIXED as readonly string[]).includes(name),
      };
    },
  };
}

let loading: Promise<Assets> | undefined;

/** The assets of this process: the prebuilt ones when present, else bundled now (once; later calls share it). */
export function loadAssets(): Promise<Assets> {
  loading ??= (async () => {
    if (existsSync(`${PREBUILT}manifest.json`)) {
      const names = JSON.parse(readFileSync(`${PREBUILT}manifest.json`, "utf8")) as Manifest;
      const files = new Map([names.script, names.style, ...FIXED].map((n) => [n, readFileSync(`${PREBUILT}${n}`)] as const));
      return fromFiles(names, files);
    }
    const files = await bundle();
    return fromFiles(files.manifest!, files);
  })();
  // A failed bundle is retried by the next request rather than remembered.
  loading.catch(() => (loading = undefined));
  return loading;
}
