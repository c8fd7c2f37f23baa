// A posted HTML form (application/x-www-form-urlencoded) read whole, within a size: the pages' and the OAuth callback's forms, which no script sends.
import type { IncomingMessage } from "node:http";

/** The posted form, or null when the body is not a form or is longer than `maxBytes` (then it is not one of ours). */
export async function readForm(req: IncomingMessage, maxBytes: number): Promise<URLSearchParams | null> {
  if (!/^application\/x-www-form-urlencoded\b/i.test(req.headers["content-type"] ?? "")) return null;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) return null;
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}
