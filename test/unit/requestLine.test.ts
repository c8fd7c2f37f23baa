// Unit test for the request line written by hand (src/platform/log.ts requestLineText): the same text JSON.stringify writes for the same line.
import { describe, expect, it } from "vitest";
import { requestLineTextForTest, type RequestLine } from "../../src/platform/log.js";

/** What logRequest wrote before: pino's prefix, then the line's own JSON after its opening brace. */
function byStringify(text: string, line: RequestLine): string {
  const prefix = text.slice(0, text.indexOf(`"msg":"request"`));
  return `${prefix}${JSON.stringify(line).slice(1)}\n`;
}

const LINES: RequestLine[] = [
  { msg: "request", request_id: "0b5c6c3e-1a86-4b6f-9a2e-9e1f0c1d2e3f", protocol: "grpc", http_version: "2.0", method: "POST", route: "scheduling.v1.UserService/GetUser", status: "ok", http_status: 200, duration_ms: 0.123 },
  { msg: "request", request_id: "a/b+c=d:e@f.g_h-i", protocol: "rest", http_version: "1.1", method: "GET", route: "GET /api/v1/user", status: 404, http_status: 404, duration_ms: 12 },
  { msg: "request", request_id: "x", protocol: "connect", http_version: "2.0", method: undefined, route: "unmatched", status: "http_502", http_status: 502, duration_ms: 1e-3, aborted: true },
  { msg: "request", request_id: "x", protocol: "http", http_version: "1.1", method: 'M"\\\u2028é', route: 'GET /a"b\\c\n', status: 'we"ird', http_status: 200, duration_ms: 123456.789 },
];

describe("requestLineText", () => {
  it.each(LINES)("writes what JSON.stringify writes for %j", (line) => {
    const text = requestLineTextForTest(line);
    expect(text).toBe(byStringify(text, line));
    expect(JSON.parse(text)).toMatchObject({ level: "info", pid: process.pid, ...JSON.parse(JSON.stringify(line)) });
  });

  it("writes each line of a route right when the fields it keeps per route change from line to line", () => {
    const base = LINES[0];
    const sequence: RequestLine[] = [
      base,
      { ...base, request_id: "second" },
      { ...base, status: "not_found" },
      { ...base, status: "not_found", http_status: 200, duration_ms: 7 },
      { ...base, protocol: "connect", http_version: "1.1" },
      { ...base, method: undefined },
      { ...base, method: "GET", aborted: true },
      base,
    ];
    for (const line of sequence) {
      const text = requestLineTextForTest(line);
      expect(text).toBe(byStringify(text, line));
    }
  });
});
