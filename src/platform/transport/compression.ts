// Compression of whole answers (extensions.md "Answers on the wire"): which coding a client takes, the levels, and the bodies compressed once.
import zlib from "node:zlib";

/*
 * Node's own zlib, no package: every answer compressed here is a whole body in memory (the REST envelope, a page,
 * a script, the OpenAPI document), so the streaming and stream-patching of the `compression` middleware would buy
 * nothing, and its res.write/res.end patching would sit on the REST hot path, which answers through
 * endAfterReads (src/platform/transport/reply.ts) and never through Express's send.
 *
 * Levels. An answer made for one request (a REST envelope, a page) is compressed at gzip level 1 / brotli
 * quality 4. Measured on a list of 8 events (5.4 KB) and an event page (10.8 KB): gzip 1 takes about half of
 * level 4's time (whose lazy matching starts there) for 2.5% (list) to 7% (page) more bytes, and level 6, the
 * default, more again for 4% less; brotli is only used when the client asks for it above gzip, and quality 4
 * is where it beats gzip's bytes clearly (18% under gzip 1) at about twice gzip 1's time; its default, 11,
 * costs far more (ten seconds on Swagger UI's bundle). bench:http has the cost under load. A body sent again as the
 * same object is compressed once per coding and kept: a frozen list page shared by concurrent readers at those
 * levels (it is made on the event loop, for the request that came first), files (the page scripts and styles,
 * /docs's files, the OpenAPI document) on the thread pool at gzip 9 / brotli 9 (brotli's 11 takes ten seconds
 * on Swagger UI's 1.7 MB for 8% less).
 */

export type Coding = "gzip" | "br";

/** Answers smaller than this go as they are: below about a packet, compression saves no round trip and costs CPU. */
export const COMPRESS_MIN_BYTES = 1024;

const ONCE_LEVELS = { gzip: 9, br: 9 } as const;
const NOW_LEVELS = { gzip: 1, br: 4 } as const;

function options(coding: Coding, level: number, bytes: number): zlib.ZlibOptions | zlib.BrotliOptions {
  if (coding === "gzip") return { level };
  return { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: level, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes } };
}

/** `body` compressed now, on this thread, at the levels for an answer made for one request. */
export function compressNow(body: string | Uint8Array, coding: Coding): Buffer {
  const bytes = typeof body === "string" ? Buffer.byteLength(body) : body.byteLength;
  return coding === "gzip" ? zlib.gzipSync(body, options("gzip", NOW_LEVELS.gzip, bytes)) : zlib.brotliCompressSync(body, options("br", NOW_LEVELS.br, bytes));
}

/** `body` compressed on libuv's thread pool (the event loop goes on meanwhile), at the levels for `kind`. */
export function compressLater(body: string | Uint8Array, coding: Coding, kind: "once" | "now"): Promise<Buffer> {
  const level = (kind === "once" ? ONCE_LEVELS : NOW_LEVELS)[coding];
  const bytes = typeof body === "string" ? Buffer.byteLength(body) : body.byteLength;
  return new Promise((resolve, reject) => {
    const done = (err: Error | null, out: Buffer) => (err ? reject(err) : resolve(out));
    if (coding === "gzip") zlib.gzip(body, options("gzip", level, bytes), done);
    else zlib.brotliCompress(body, options("br", level, bytes), done);
  });
}

/** Bodies compressed once, by the object that is sent again (a frozen envelope body, a Buffer of a file). */
const kept = new WeakMap<object, Partial<Record<Coding, Buffer | Promise<Buffer>>>>();

/** The compressed form of a body sent again and again as `key`: made the first time (by `make`), then kept. */
export function compressedOnce<T extends Buffer | Promise<Buffer>>(key: object, coding: Coding, make: () => T): T {
  let forms = kept.get(key);
  if (!forms) kept.set(key, (forms = {}));
  const found = forms[coding];
  if (found !== undefined) return found as T;
  const made = make();
  forms[coding] = made;
  // A failed compression is not kept: the next request tries again.
  if (made instanceof Promise) made.catch(() => delete forms[coding]);
  return made;
}

/** Content types worth compressing: text (HTML, CSS, plain, calendars), JSON, scripts, SVG. */
export function isCompressibleType(contentType: string | number | readonly string[] | undefined): boolean {
  if (typeof contentType !== "string") return false;
  return /^\s*(text\/|application\/(json|javascript|ecmascript|xml)|application\/[\w.+-]+\+(json|xml)|image\/svg\+xml)/i.test(contentType);
}

/** The q-value of each coding a client listed ("gzip;q=0.8, br" → gzip 0.8, br 1); `*` stands for the others. */
function qValues(header: string): Map<string, number> {
  const q = new Map<string, number>();
  for (const part of header.split(",")) {
    const [name, ...params] = part.split(";");
    const coding = name.trim().toLowerCase();
    if (coding === "") continue;
    let value = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(p);
      if (m) value = Number(m[1]);
    }
    if (Number.isFinite(value)) q.set(coding, Math.max(q.get(coding) ?? 0, Math.min(1, value)));
  }
  return q;
}

const chosen = new Map<string, Coding | undefined>();
const CHOSEN_MAX = 64;

/**
 * The coding to answer in for this Accept-Encoding: gzip, or br when the client prefers it (a higher q-value);
 * on a tie gzip, which costs less CPU for nearly the same bytes on answers of this size. None when the client
 * lists neither (nor `*`), or refuses them with q=0. Clients send a handful of distinct headers: the answers
 * are kept per header text.
 */
export function chooseCoding(header: string | string[] | undefined): Coding | undefined {
  const text = Array.isArray(header) ? header.join(",") : header;
  if (text === undefined || text === "") return undefined;
  if (chosen.has(text)) return chosen.get(text);
  const q = qValues(text);
  const star = q.get("*") ?? 0;
  const gzip = q.get("gzip") ?? q.get("x-gzip") ?? star;
  const br = q.get("br") ?? star;
  const coding: Coding | undefined = br > gzip ? "br" : gzip > 0 ? "gzip" : undefined;
  if (chosen.size >= CHOSEN_MAX) chosen.clear();
  chosen.set(text, coding);
  return coding;
}

/** Adds Accept-Encoding to a Vary header value (as it stands, possibly unset), once. */
export function varyOnEncoding(vary: string | number | readonly string[] | undefined): string {
  const current = Array.isArray(vary) ? vary.join(", ") : vary === undefined ? "" : String(vary);
  if (current === "") return "Accept-Encoding";
  if (/(^|,)\s*(\*|accept-encoding)\s*(,|$)/i.test(current)) return current;
  return `${current}, Accept-Encoding`;
}
