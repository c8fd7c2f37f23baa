// Reads the one file of a multipart/form-data body (and its small text fields), with a byte cap on the file and on the bytes held at once.
import busboy from "busboy";
import type { IncomingMessage } from "node:http";
import { ApiError } from "../../domain/errors.js";
import { bodiesBusy, bodyBudget } from "../transport/bodyBudget.js";

export interface MultipartResult {
  /** The file sent in the field asked for, if it came first among the file parts. */
  file: { bytes: Buffer; filename: string; truncated: boolean } | undefined;
  fields: Map<string, string>;
  /** The name of every part, file or text, in the body's order (each once): what the body holds, to check as JSON names are. */
  names: string[];
}

export class MultipartError extends Error {}

/**
 * Only one file part is read (busboy's `files: 1`): the API takes one picture, and five 5 MB parts per request
 * were 25 MB of memory an anonymous caller could make the service hold. A file part under another name is
 * drained, never buffered. The file is kept only up to one byte past `maxFileBytes` (so the service can tell it
 * is too large) and the rest is drained too. The bytes kept count against the process's body budget
 * (src/platform/transport/bodyBudget.ts) until the caller is done with the result and calls `release`.
 */
export function readMultipart(req: IncomingMessage, field: string, maxFileBytes: number): Promise<MultipartResult & { release(): void }> {
  return new Promise((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      bb = busboy({ headers: req.headers, limits: { files: 1, fields: 20, fieldSize: 64 * 1024, fileSize: maxFileBytes + 1, parts: 21 } });
    } catch (err) {
      reject(new MultipartError(err instanceof Error ? err.message : "malformed multipart body"));
      return;
    }
    const owner = req.socket;
    let held = 0;
    const release = () => {
      bodyBudget.give(owner, held);
      held = 0;
    };
    let file: MultipartResult["file"];
    const fields: MultipartResult["fields"] = new Map();
    const names = new Set<string>();
    let failed = false;
    const fail = (err: unknown) => {
      if (failed) return;
      failed = true;
      release();
      req.unpipe(bb);
      req.resume(); // the rest of the body is read and dropped, so the answer can be written
      reject(err instanceof ApiError ? err : new MultipartError(err instanceof Error ? err.message : "malformed multipart body"));
    };
    bb.on("file", (name, stream, info) => {
      names.add(name);
      // A body cut short inside a file errors the file stream too; unheard, that error would end the process.
      stream.on("error", fail);
      if (name !== field || file !== undefined) {
        stream.resume();
        return;
      }
      const chunks: Buffer[] = [];
      let truncated = false;
      stream.on("data", (c: Buffer) => {
        if (failed) return;
        if (!bodyBudget.take(owner, c.length)) return fail(bodiesBusy());
        held += c.length;
        chunks.push(c);
      });
      stream.on("limit", () => {
        truncated = true;
      });
      stream.on("close", () => {
        file = { bytes: Buffer.concat(chunks), filename: info.filename ?? "", truncated };
      });
    });
    bb.on("field", (name, value) => {
      names.add(name);
      if (!fields.has(name)) fields.set(name, value);
    });
    bb.on("error", fail);
    bb.on("close", () => {
      if (!failed) resolve({ file, fields, names: [...names], release });
    });
    req.pipe(bb);
  });
}

/**
 * The part names of a form as the JSON object they stand for (`user[profile_picture]`, `user[is_admin]` →
 * `{"user": {"profile_picture": null, "is_admin": null}}`), so a form's names are checked by the rule of JSON
 * bodies (src/platform/rest/fields.ts). A name without brackets stays a key of the top level.
 */
export function formNamesAsObject(names: readonly string[]): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const name of names) {
    const m = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(name);
    const path = m ? [m[1], ...[...m[2].matchAll(/\[([^[\]]*)\]/g)].map((x) => x[1])] : [name];
    let node = root;
    path.forEach((key, i) => {
      if (i === path.length - 1) {
        if (!(key in node)) node[key] = null;
        return;
      }
      const next = node[key];
      node = typeof next === "object" && next !== null ? (next as Record<string, unknown>) : (node[key] = {});
    });
  }
  return root;
}
