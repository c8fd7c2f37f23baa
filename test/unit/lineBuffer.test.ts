// Unit tests for the log destination (src/platform/log.ts LineBuffer): lines reach the file whole, in order, and only when due.
import { closeSync, mkdtempSync, openSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LineBuffer } from "../../src/platform/log.js";

function target(): { fd: number; read: () => string } {
  const path = join(mkdtempSync(join(tmpdir(), "lines-")), "log");
  const fd = openSync(path, "w");
  return { fd, read: () => readFileSync(path, "utf8") };
}

describe("LineBuffer", () => {
  it("holds lines until 4 KB are collected or flushSync is called, then writes them in order", () => {
    const { fd, read } = target();
    const out = new LineBuffer(fd);
    out.write("first\n");
    out.write("second\n");
    expect(read()).toBe("");
    out.flushSync();
    expect(read()).toBe("first\nsecond\n");
    const line = `${"x".repeat(99)}\n`;
    for (let i = 0; i < 40; i++) out.write(line);
    expect(read()).toBe("first\nsecond\n");
    out.write(line);
    expect(read()).toBe(`first\nsecond\n${line.repeat(41)}`);
    closeSync(fd);
  });

  it("writes multi-byte text as UTF-8, lone surrogates included, and lines longer than its buffer whole", () => {
    const { fd, read } = target();
    const out = new LineBuffer(fd);
    const unicode = "Zoë 東京 🗓️ \ud800 end\n";
    const long = `${"é".repeat(40_000)}\n`;
    out.write(unicode);
    out.write(long);
    out.write("after\n");
    out.flushSync();
    expect(read()).toBe(Buffer.from(unicode + long + "after\n", "utf8").toString("utf8"));
    closeSync(fd);
  });

  it("writes what it holds within about 100 ms without being asked", async () => {
    const { fd, read } = target();
    const out = new LineBuffer(fd);
    out.write("soon\n");
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(read()).toBe("soon\n");
    closeSync(fd);
  });

  it("drops lines it cannot write instead of throwing", () => {
    // A descriptor no process has (a closed one could be reused by another file of this test run).
    const out = new LineBuffer(2 ** 30);
    out.write("lost\n");
    expect(() => out.flushSync()).not.toThrow();
  });
});
