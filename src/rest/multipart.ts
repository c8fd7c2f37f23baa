// Reads a multipart/form-data body into file bytes and text fields, with a byte cap per file.
import busboy from "busboy";
import type { Request } from "express";

export interface MultipartResult {
  files: Map<string, { bytes: Buffer; filename: string; truncated: boolean }>;
  fields: Map<string, string>;
}

export class MultipartError extends Error {}

/**
 * A file longer than `maxFileBytes` is kept only up to one byte past the cap (so the service can tell it is
 * too large) and the rest is drained, never buffered.
 */
export function readMultipart(req: Request, maxFileBytes: number): Promise<MultipartResult> {
  return new Promise((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      bb = busboy({ headers: req.headers, limits: { files: 5, fields: 50, fieldSize: 64 * 1024, fileSize: maxFileBytes + 1, parts: 60 } });
    } catch (err) {
      reject(new MultipartError(err instanceof Error ? err.message : "malformed multipart body"));
      return;
    }
    const files: MultipartResult["files"] = new Map();
    const fields: MultipartResult["fields"] = new Map();
    const fail = (err: unknown) => reject(new MultipartError(err instanceof Error ? err.message : "malformed multipart body"));
    bb.on("file", (name, stream, info) => {
      const chunks: Buffer[] = [];
      let truncated = false;
      // A body cut short inside a file errors the file stream too; unheard, that error would end the process.
      stream.on("error", fail);
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("limit", () => {
        truncated = true;
      });
      stream.on("close", () => {
        if (!files.has(name)) files.set(name, { bytes: Buffer.concat(chunks), filename: info.filename ?? "", truncated });
      });
    });
    bb.on("field", (name, value) => {
      if (!fields.has(name)) fields.set(name, value);
    });
    bb.on("error", fail);
    bb.on("close", () => resolve({ files, fields }));
    req.pipe(bb);
  });
}
