// Compresses the whole-body answers of Express handlers (pages, their scripts and styles, /docs and the OpenAPI document) for clients that accept it.
import type { NextFunction, Request, RequestHandler, Response } from "express";
import { chooseCoding, COMPRESS_MIN_BYTES, compressedOnce, compressLater, isCompressibleType, varyOnEncoding, type Coding } from "../transport/compression.js";
import { logger } from "../log.js";

type End = (chunk?: unknown, encoding?: unknown, callback?: unknown) => Response;

/**
 * The compressed body: a Buffer (a file, sent again as the same object) is compressed once per coding, on the
 * thread pool, and kept; a string (a page made for this request) is compressed for this answer, on the thread
 * pool too, so a page of 60 KB costs the event loop nothing but the hand-off.
 */
function packed(body: string | Buffer, encoding: BufferEncoding | undefined, coding: Coding): Promise<Buffer> {
  if (Buffer.isBuffer(body)) return compressedOnce(body, coding, () => compressLater(body, coding, "once"));
  return compressLater(Buffer.from(body, encoding ?? "utf8"), coding, "now");
}

/**
 * Runs `handler` with its answers compressed where they should be (extensions.md "Answers on the wire"): a
 * body of a compressible type, 1 KB or more, sent whole with res.end (Express's send does that), to a client
 * whose Accept-Encoding takes gzip or br. Every answer of a compressible type says `Vary: Accept-Encoding`.
 * Streamed answers, answers already encoded and HEAD answers go as they are. When the handler passes the request
 * on (next), res.end is given back first, so the handlers after it (Connect's among them, whose protocols have
 * their own compression) are untouched.
 */
export function compressing(handler: RequestHandler): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const end = res.end as End;
    let wrote = false;
    const write = res.write;
    // A handler that streams (res.write) is sent as it streams.
    res.write = function (this: Response, ...args: Parameters<Response["write"]>) {
      wrote = true;
      return write.apply(this, args);
    } as Response["write"];
    (res as unknown as { end: End }).end = function (this: Response, chunk?: unknown, encoding?: unknown, callback?: unknown): Response {
      res.end = end as Response["end"];
      res.write = write;
      if (wrote || res.headersSent || !isCompressibleType(res.getHeader("content-type"))) return end.call(this, chunk, encoding, callback);
      res.setHeader("Vary", varyOnEncoding(res.getHeader("vary")));
      const body = typeof chunk === "string" || Buffer.isBuffer(chunk) ? chunk : undefined;
      const bytes = body === undefined ? 0 : typeof body === "string" ? Buffer.byteLength(body, typeof encoding === "string" ? (encoding as BufferEncoding) : "utf8") : body.byteLength;
      const coding = bytes >= COMPRESS_MIN_BYTES && req.method !== "HEAD" && res.getHeader("content-encoding") === undefined ? chooseCoding(req.headers["accept-encoding"]) : undefined;
      if (body === undefined || coding === undefined) return end.call(this, chunk, encoding, callback);
      const done = typeof encoding === "function" ? encoding : callback;
      packed(body, typeof encoding === "string" ? (encoding as BufferEncoding) : undefined, coding).then(
        (out) => {
          if (res.headersSent || res.destroyed) return;
          res.setHeader("Content-Encoding", coding);
          res.setHeader("Content-Length", out.byteLength);
          end.call(res, out, done);
        },
        (err: unknown) => {
          logger.error({ msg: "compression failed; answered uncompressed", error: String(err) });
          if (!res.headersSent) end.call(res, chunk, encoding, callback);
        },
      );
      return res;
    };
    handler(req, res, (err?: unknown) => {
      res.end = end as Response["end"];
      res.write = write;
      next(err);
    });
  };
}
