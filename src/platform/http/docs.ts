// Serves the OpenAPI document at /api/v1/openapi.json and Swagger UI at /docs, its assets from node_modules (no CDN).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import express, { type Request, type Response } from "express";
import { ROOT_PATHS } from "../../domain/rootPaths.js";
import { buildOpenApi } from "../rest/openapi.js";
import { API_PREFIX } from "../rest/router.js";
import type { RestRoute } from "../rest/table.js";

const OPENAPI_PATH = `${API_PREFIX}/openapi.json`;
const ASSETS_DIR = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
/** The only files of swagger-ui-dist the page needs; its own index.html and initializer point at a demo API. */
const ASSETS: Readonly<Record<string, string>> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "favicon-32x32.png": "image/png",
  "favicon-16x16.png": "image/png",
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Scheduling API</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png" sizes="32x32">
  <link rel="icon" type="image/png" href="/docs/assets/favicon-16x16.png" sizes="16x16">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

// validatorUrl null: the default would send the document to validator.swagger.io. No persistAuthorization: it
// would keep a pasted API key in the browser's localStorage, for any later script of this origin to read.
const INIT = `window.ui = SwaggerUIBundle({
  url: ${JSON.stringify(OPENAPI_PATH)},
  dom_id: "#swagger-ui",
  deepLinking: true,
  tryItOutEnabled: true,
  validatorUrl: null,
});
`;

/**
 * Headers of every HTML answer: scripts and styles from this origin only (Swagger UI's initialiser is the served
 * /docs/init.js, never inline), no plugins, no framing (clickjacking a page where a key gets pasted), no
 * type sniffing, no referrer. Swagger UI's own stylesheet draws icons from data: URIs; its calls go to this origin.
 */
const HTML_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "Content-Security-Policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "X-Frame-Options": "DENY",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
};

/** A file of swagger-ui-dist, read once: the same Buffer each time, so its compressed forms are made once too. */
const assetFiles = new Map<string, Buffer>();
function assetFile(file: string): Buffer {
  let body = assetFiles.get(file);
  if (!body) assetFiles.set(file, (body = readFileSync(join(ASSETS_DIR, file))));
  return body;
}

export function docsRouter(routes: readonly RestRoute[]): express.Router {
  const router = express.Router({ strict: false });
  // A Buffer, made once: its compressed forms are kept with it (src/platform/http/compression.ts). Made at the first
  // request for it, not at start: building it is about a tenth of a start's CPU, and few replicas are ever asked.
  let document: Buffer | undefined;
  router.get(OPENAPI_PATH, (_req: Request, res: Response) => {
    document ??= Buffer.from(JSON.stringify(buildOpenApi(routes)));
    res.setHeader("X-Content-Type-Options", "nosniff");
    res.type("application/json").send(document);
  });
  router.get(`/${ROOT_PATHS.docs}`, (_req: Request, res: Response) => {
    res.set(HTML_SECURITY_HEADERS).type("html").send(PAGE);
  });
  router.get(`/${ROOT_PATHS.docs}/init.js`, (_req: Request, res: Response) => {
    res.setHeader("X-Content-Type-Options", "nosniff");
    res.type("text/javascript; charset=utf-8").send(INIT);
  });
  router.get(`/${ROOT_PATHS.docs}/assets/:file`, (req: Request, res: Response, next) => {
    const file = String(req.params.file);
    if (!Object.hasOwn(ASSETS, file)) return next();
    const type = ASSETS[file];
    res.setHeader("Cache-Control", "public, max-age=3600");
    res.setHeader("X-Content-Type-Options", "nosniff");
    // From memory rather than sendFile's stream, so the answer is one body that can be compressed (and kept so).
    res.type(type).send(assetFile(file));
  });
  return router;
}
