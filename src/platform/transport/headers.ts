// Headers adapters: the Fetch API's Headers over Node's request headers object, read when asked instead of copied.
import { validateHeaderName, validateHeaderValue } from "node:http";

/** What Headers strips from both ends of a value (HTTP whitespace). */
const EDGE_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;

const isHttpWhitespace = (code: number) => code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;

/** Whether Headers would strip anything from `v` (checked before the regular expression, which nearly never has work). */
function hasEdgeWhitespace(v: string): boolean {
  return v.length > 0 && (isHttpWhitespace(v.charCodeAt(0)) || isHttpWhitespace(v.charCodeAt(v.length - 1)));
}

/**
 * The last value each header name was validated with (as node:http validates what it sends), so that a call
 * setting the same header as the one before (GetUser's Cache-Control: no-store, every time) skips the two
 * regular expressions. Validity depends on the name and value alone.
 */
const VALID = new Map<string, string>();
const MAX_VALID = 64;

/**
 * Headers over Node's headers object: a request's (read when asked instead of copied, and validated, on every
 * request; services read one or two of them), or an empty one for a response that may never get any. Anything
 * beyond get/has, or walking an empty set, works on a full copy made on first use.
 *
 * It implements `Headers` rather than extending it: the Headers constructor alone builds a header list and a Map,
 * and a gRPC call used three of them (request, response headers, trailers) without ever changing one.
 */
export class NodeHeaders implements Headers {
  private copy: Headers | undefined;
  /**
   * Made empty (a response's headers or trailers): `set` and `forEach` work on `raw` itself, checked as Node checks
   * what it sends, so the one header a call may set (Cache-Control of an answer with a secret, on every GetUser)
   * costs no Headers object. A request's headers are never written to.
   */
  private readonly owned: boolean;
  private readonly raw: Record<string, string | string[] | undefined>;

  /**
   * `added`: headers the service put beside the request's (StreamExchange's `added`, names in lower case), which
   * win over the same names in `raw`; a name whose value is undefined is not added.
   */
  constructor(
    raw?: Record<string, string | string[] | undefined>,
    private readonly added?: Readonly<Record<string, string | undefined>>,
  ) {
    this.owned = raw === undefined;
    this.raw = raw ?? {};
  }

  private full(): Headers {
    if (!this.copy) {
      this.copy = new Headers();
      const added = this.added;
      for (const [k, v] of Object.entries(this.raw)) {
        // HTTP/2 pseudo-headers (":path") are not headers.
        if (v !== undefined && !k.startsWith(":") && added?.[k] === undefined) this.copy.append(k, Array.isArray(v) ? v.join(", ") : v);
      }
      if (added) for (const [k, v] of Object.entries(added)) if (v !== undefined) this.copy.set(k, v);
    }
    return this.copy;
  }

  /** Whether no header was set (a response's) or sent (a request's). */
  isEmpty(): boolean {
    if (this.copy) {
      for (const _ of this.copy.keys()) return false;
      return true;
    }
    for (const _ in this.raw) return false;
    if (this.added) for (const k in this.added) if (this.added[k] !== undefined) return false;
    return true;
  }

  get(name: string): string | null {
    if (this.copy) return this.copy.get(name);
    const v = this.rawOf(name);
    return v === undefined ? null : Array.isArray(v) ? v.join(", ") : v;
  }

  has(name: string): boolean {
    return this.copy ? this.copy.has(name) : this.rawOf(name) !== undefined;
  }

  /**
   * `raw`'s value under the name in lower case. Its names are all lower case (Node's, and `set`'s), so a name found
   * as given needs no lowering: the services ask in lower case ("x-api-key"), and lowering it was a call per read.
   */
  private rawOf(name: string): string | string[] | undefined {
    const v = this.named(name);
    if (v !== undefined) return v;
    const lower = name.toLowerCase();
    return lower === name ? undefined : this.named(lower);
  }

  /** The value under exactly this name: an added header's, else the request's. */
  private named(name: string): string | string[] | undefined {
    const added = this.added?.[name];
    return added !== undefined ? added : this.raw[name];
  }

  set(name: string, value: string): void {
    if (this.copy || !this.owned) return this.full().set(name, value);
    const text = String(value);
    const v = hasEdgeWhitespace(text) ? text.replace(EDGE_WHITESPACE, "") : text;
    if (VALID.get(name) !== v) {
      validateHeaderName(name);
      validateHeaderValue(name, v);
      if (VALID.size >= MAX_VALID) VALID.clear();
      VALID.set(name, v);
    }
    this.raw[name.toLowerCase()] = v;
  }

  append(name: string, value: string): void {
    this.full().append(name, value);
  }

  delete(name: string): void {
    this.full().delete(name);
  }

  getSetCookie(): string[] {
    return this.full().getSetCookie();
  }

  forEach(fn: (value: string, key: string, parent: Headers) => void, thisArg?: unknown): void {
    if (!this.copy && this.isEmpty()) return;
    if (!this.copy && this.owned) {
      // Only `set` wrote here: one string per lower-case name, walked in name order as Headers walks them.
      for (const k of Object.keys(this.raw).sort()) fn.call(thisArg, this.raw[k] as string, k, this);
      return;
    }
    this.full().forEach((v, k) => fn.call(thisArg, v, k, this));
  }

  entries(): HeadersIterator<[string, string]> {
    return this.full().entries();
  }

  keys(): HeadersIterator<string> {
    return this.full().keys();
  }

  values(): HeadersIterator<string> {
    return this.full().values();
  }

  [Symbol.iterator](): HeadersIterator<[string, string]> {
    return this.full()[Symbol.iterator]();
  }
}
