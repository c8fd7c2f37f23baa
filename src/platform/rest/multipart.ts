// Reads the one file of a multipart/form-data body (and its small text fields), with a byte cap on the file and on the bytes held at once.
import busboy from "busboy";
import type { Request } from "express";
import { ApiError } from "../../domain/errors.js";
import { bodiesBusy, bodyBudget } from "../transport/bodyBudget.js";

export interface MultipartResult {
  /** The file sent in the field asked for, if it came first among the file parts. */
  file: { bytes: Buffer; filename: string; truncated: boolean } | undefined;
  fields: Map<string, string>;
}

export class MultipartError extends Error {}

/**
 * Only one file part is read (busboy's `files: 1`): the API takes one picture, and five 5 MB parts per request
 * were 25 MB of memory an anonymous caller could make the service hold. A file part under another name is
 * drained, never buffered. The file is kept only up to one byte past `maxFileBytes` (so the service can tell it
 * is too large) and the rest is drained too. The bytes kept count against the process's body budget
 * (src/platform/transport/bodyBudget.ts) until the caller is done with the result and calls `release`.
 */
export function readMultipart(req: Request, field: string, maxFileBytes: number): Promise<MultipartResult & { release(): void }> {
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
      if (!fields.has(name)) fields.set(name, value);
    });
    bb.on("error", fail);
    bb.on("close", () => {
      if (!failed) resolve({ file, fields, release });
    });
    req.pipe(bb);
  });
}
