// Unit tests for NodeHeaders (src/platform/transport/headers.ts): the Headers of every REST call and fast RPC, read from Node's object.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { NodeHeaders } from "../../src/platform/transport/headers.js";

describe("NodeHeaders", () => {
  it("reads Node's headers case-insensitively, joins repeated ones, and leaves HTTP/2 pseudo-headers out of a walk", () => {
    const h = new NodeHeaders({ ":path": "/x", "x-api-key": "k", "x-forwarded-for": ["a", "b"], absent: undefined });
    expect(h.get("X-API-Key")).toBe("k");
    expect(h.get("x-forwarded-for")).toBe("a, b");
    expect(h.has("absent")).toBe(false);
    expect(h.get("missing")).toBeNull();
    expect([...h]).toEqual([
      ["x-api-key", "k"],
      ["x-forwarded-for", "a, b"],
    ]);
  });

  it("answers like a Headers once changed, the changes included", () => {
    const h = new NodeHeaders({ "x-one": "1" });
    h.set("X-Two", "2");
    h.append("x-two", "3");
    h.delete("x-one");
    const seen: Array<[string, string]> = [];
    h.forEach((v, k, parent) => {
      expect(parent).toBe(h);
      seen.push([k, v]);
    });
    expect(seen).toEqual([["x-two", "2, 3"]]);
    expect(h.has("x-one")).toBe(false);
    expect([...h.keys()]).toEqual(["x-two"]);
    expect([...h.values()]).toEqual(["2, 3"]);
    expect(new Headers(h).get("x-two")).toBe("2, 3");
  });

  it("starts empty for a response, and walking it calls nothing", () => {
    const h = new NodeHeaders();
    let calls = 0;
    h.forEach(() => calls++);
    expect(calls).toBe(0);
    h.set("retry-after", "7");
    h.forEach(() => calls++);
    expect(calls).toBe(1);
    expect(h.getSetCookie()).toEqual([]);
  });

  it("a response's headers, set in place, answer as a Headers given the same calls (the ordinary path)", () => {
    const name = fc.constantFrom("Cache-Control", "cache-control", "Retry-After", "x-b", "X-A", "bad name", "");
    const value = fc.constantFrom("no-store", "  7 ", "\tv\t", "a, b", "", "x\r\ny", "é");
    const op = fc.record({ kind: fc.constantFrom("set", "set", "set", "append", "delete"), name, value });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 8 }), (ops) => {
        const ours = new NodeHeaders();
        const theirs = new Headers();
        for (const { kind, name: n, value: v } of ops) {
          const run = (h: Headers) => {
            try {
              if (kind === "set") h.set(n, v);
              else if (kind === "append") h.append(n, v);
              else h.delete(n);
              return "ok";
            } catch (err) {
              return err instanceof TypeError ? "TypeError" : String(err);
            }
          };
          expect(run(ours), `${kind} ${JSON.stringify(n)} ${JSON.stringify(v)}`).toBe(run(theirs));
        }
        const walk = (h: Headers) => {
          const seen: Array<[string, string]> = [];
          h.forEach((v, k) => seen.push([k, v]));
          return seen;
        };
        expect(walk(ours)).toEqual(walk(theirs));
        expect([...ours]).toEqual([...theirs]);
        for (const n of ["cache-control", "Retry-After", "x-a"]) expect([ours.get(n), ours.has(n)]).toEqual([theirs.get(n), theirs.has(n)]);
      }),
      { numRuns: 500 },
    );
  });
});

