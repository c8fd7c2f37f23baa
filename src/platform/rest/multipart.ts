// Reads the one file of a multipart/form-data body (written to a temporary file) and its small text fields, with a byte cap on the file and on the bytes spooled at once.
import { Code } from "@connectrpc/connect";
import busboy from "busboy";
import { randomBytes } from "node:crypto";
import { createWriteStream, type WriteStream } from "node:fs";
import { readFile, rm } from "node:fs/promises";
import type { IncomingMessage } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ApiError } from "../../domain/errors.js";
import { logger } from "../log.js";
import { bodiesBusy, spoolBudget } from "../transport/bodyBudget.js";
import { turns } from "../transport/turns.js";

export interface MultipartResult {
  /** The file sent in the field asked for, if it came first among the file parts: where it was written, not its bytes. */
  file: { path: string; filename: string; truncated: boolean } | undefined;
  fields: Map<string, string>;
  /** The name of every part, file or text, in the body's order (each once): what the body holds, to check as JSON names are. */
  names: string[];
}

export class MultipartError extends Error {}

/**
 * Only one file part is read (busboy's `files: 1`): the API takes one picture, and five 5 MB parts per request
 * were 25 MB an anonymous caller could make the service hold. A file part under another name is drained, never
 * kept. The file is kept only up to one byte past `maxFileBytes` (so the service can tell it is too large) and the
 * rest is drained too. It is written to a temporary file as it arrives, not held in memory: uploads wait for the
 * one picture decoder (src/features/accounts/picture.ts), and sixteen 5 MB bodies waiting in memory (with their
 * garbage) took the service past 250 MB (bench/RESULTS.md). The bytes written count against the spool budget
 * (src/platform/transport/bodyBudget.ts) until the caller calls `release`, which also deletes the file.
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
    let spooled: string | undefined;
    let out: WriteStream | undefined;
    let written: Promise<void> = Promise.resolve();
    const release = () => {
      spoolBudget.give(owner, held);
      held = 0;
      const path = spooled;
      spooled = undefined;
      if (!path) return;
      const remove = () => void rm(path, { force: true }).catch(() => undefined);
      // The file is opened after the stream is made: removed before it closes, it could be created after.
      if (out && !out.closed) {
        out.once("close", remove);
        out.destroy();
      } else remove();
    };
    let file: MultipartResult["file"];
    const fields: MultipartResult["fields"] = new Map();
    const names = new Set<string>();
    let failed = false;
    let settled = false;
    const fail = (err: unknown) => {
      if (failed || settled) return;
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
      if (name !== field || file !== undefined || spooled !== undefined) {
        stream.resume();
        return;
      }
      const path = join(tmpdir(), `upload-${randomBytes(12).toString("hex")}`);
      spooled = path;
      // Only this process may read it ("wx": a new file, never one that is there already).
      const sink = createWriteStream(path, { flags: "wx", mode: 0o600 });
      out = sink;
      written = new Promise((done, broke) => {
        sink.on("finish", done);
        sink.on("error", broke);
      });
      // A failed write fails the upload through `written`; the rest of the file is dropped.
      written.catch(() => stream.resume());
      let truncated = false;
      stream.on("data", (c: Buffer) => {
        if (failed) return;
        if (!spoolBudget.take(owner, c.length)) return fail(bodiesBusy());
        held += c.length;
      });
      stream.on("limit", () => {
        truncated = true;
      });
      stream.pipe(sink);
      stream.on("close", () => {
        file = { path, filename: info.filename ?? "", truncated };
      });
    });
    bb.on("field", (name, value) => {
      names.add(name);
      if (!fields.has(name)) fields.set(name, value);
    });
    bb.on("error", fail);
    bb.on("close", () => {
      written.then(
        () => {
          if (failed) return;
          settled = true;
          resolve({ file, fields, names: [...names], release });
        },
        (err: unknown) => {
          // The temporary folder is full or not writable: the operator's to fix (TMPDIR), the caller may retry.
          logger.error({ msg: "an upload could not be written to the temporary folder", error: String(err) });
          fail(new ApiError(Code.Unavailable, "the service could not take the upload just now; retry shortly", { httpStatus: 503, headers: { "retry-after": "1" } }));
        },
      );
    });
    // A client gone before its body ended: what it sent goes (else its file and budget were kept for good).
    req.on("close", () => {
      if (!req.complete) fail(new MultipartError("the request ended before its body did"));
    });
    req.pipe(bb);
  });
}

/** Uploaded files read into memory at once: one, as the decoder takes one; the others wait on disk. */
const fileTurn = turns(1);

/**
 * The spooled file's bytes, once it is this upload's turn to be held in memory; `done` ends the turn (when the
 * upload has been answered).
 */
export async function spooledBytes(file: { path: string }): Promise<{ bytes: Buffer; done: () => void }> {
  const done = await fileTurn();
  try {
    return { bytes: await readFile(file.path), done };
  } catch (err) {
    done();
    throw err;
  }
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
