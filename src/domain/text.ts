// Which characters a text field may hold: no control characters, no bidirectional overrides, well-formed Unicode.
import { invalid } from "./errors.js";

/**
 * C0 and C1 controls (NUL, ESC, DEL, ...) and the line and paragraph separators: nothing a person types into a
 * name, an address or a title, and each can truncate, reflow or inject into what is built from the text (a
 * log line, an e-mail header, a calendar entry).
 */
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/;
/** Tab, line feed and carriage return: refused in one-line fields, allowed where text has lines. */
const LINE_BREAKS = /[\t\n\r\u2028\u2029]/;
/**
 * Bidirectional embeddings, overrides and isolates (LRE, RLE, PDF, LRO, RLO, LRI, RLI, FSI, PDI): they make text
 * display in another order than it reads ("Trojan Source"), e.g. an e-mail or url that looks like another.
 * The marks (LRM, RLM, ALM) stay allowed: right-to-left writers use them and they reorder nothing by themselves.
 */
const BIDI_CONTROL = /[\u202A-\u202E\u2066-\u2069]/;
/** Any of the above: one test on the common path, where nothing is found. */
const SUSPECT = /[\u0000-\u001F\u007F-\u009F\u2028\u2029\u202A-\u202E\u2066-\u2069\uD800-\uDFFF]/;

/** What is wrong with a text value, or undefined; `multiline` fields may hold tabs and line breaks. */
function textProblem(value: string, multiline: boolean): string | undefined {
  if (!SUSPECT.test(value)) return undefined;
  if (CONTROL.test(value) || (!multiline && LINE_BREAKS.test(value))) return "must not contain control characters";
  if (BIDI_CONTROL.test(value)) return "must not contain bidirectional override characters";
  // Surrogates are fine in pairs; a lone one is not text (it cannot be written as UTF-8).
  if (/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(value)) return "must be valid Unicode text";
  return undefined;
}

/** Throws the 422 naming `field` when the value breaks textProblem's rule. */
export function checkText(field: string, value: string, multiline: boolean): void {
  const problem = textProblem(value, multiline);
  if (problem) throw invalid(`${field} ${problem}`, field);
}

/**
 * A reason as one line of plain words, fit for a field a person reads (a calendar connection's `last_error` and
 * `warnings`, a webhook delivery's `error`): its first line only (a stack trace starts on the second), addresses
 * taken out (a URL may carry credentials, and a feed's URL is one; an IP address and port, or localhost's, may be
 * ours), source file paths too (OpenSSL's `../deps/openssl/…/ssl3_record.c:350`), controls gone, at most `max`
 * characters. src/domain/failure.ts says the known failures in words before this.
 */
export function plainLine(text: string, max = 300): string {
  let line = (text.split(/\r\n|\r|\n|\u2028|\u2029/, 1)[0] ?? "").slice(0, 4 * max);
  line = line.replace(/\b(?:https?|file|webcals?|ftp):\/\/\S*/gi, "(address)");
  line = line.replace(/(?:[A-Za-z]:|\.{1,2})?(?:[\\/][\w.@+-]+)+\.(?:[cm]?[jt]sx?|json|node|c|cc|cpp|h)\b(?::\d+)*:?/g, "(file)");
  line = line.replace(/\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b|\[[0-9a-f:.]+\](?::\d+)?|(?<![\w:])[0-9a-f]{0,4}(?::[0-9a-f]{0,4})*::[0-9a-f:.]*(?:%\w+)?(?![\w:])|\blocalhost:\d+/gi, "(address)");
  line = line.replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, " ").replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
