// Unit tests for the log destination (src/platform/log.ts LineBuffer): lines reach the file whole, in order, and only when due.
import { spawnSync } from "node:child_process";
import { closeSync, constants, mkdtempSync, openSync, readFileSync, readSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LineBuffer } from "../../src/platform/log.js";
import { until } from "../helpers/wait.js";

function target(): { fd: number; read: () => string } {
  const path = join(mkdtempSync(join(tmpdir(), "lines-")), "log");
  const fd = openSync(path, "w");
  return { fd, read: () => readFileSync(path, "utf8") };
}

describe("LineBuffer", () => {
  it("holds lines until 48 KB are collected or flushSync is called, then writes them in order", () => {
    const { fd, read } = target();
    const out = new LineBuffer(fd);
    out.write("first\n");
    out.write("second\n");
    expect(read()).toBe("");
    out.flushSync();
    expect(read()).toBe("first\nsecond\n");
    const line = `${"x".repeat(99)}\n`;
    for (let i = 0; i < 491; i++) out.write(line);
    expect(read()).toBe("first\nsecond\n");
    out.write(line);
    expect(read()).toBe(`first\nsecond\n${line.repeat(492)}`);
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

  /** A FIFO nobody reads yet, both ends in this process and non-blocking (as libuv leaves a pipe on stderr). */
  function fullablePipe(): { fd: number; readAll: () => string } {
    const path = join(mkdtempSync(join(tmpdir(), "pipe-")), "fifo");
    expect(spawnSync("mkfifo", [path]).status).toBe(0);
    const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    const fd = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
    const chunk = Buffer.alloc(65536);
    return {
      fd,
      readAll() {
        let text = "";
        for (;;) {
          try {
            const n = readSync(reader, chunk, 0, chunk.length, null);
            if (n === 0) return text;
            text += chunk.toString("latin1", 0, n);
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code === "EAGAIN") return text;
            throw err;
          }
        }
      },
    };
  }

  it("never waits for a full pipe: lines wait in order, request lines past the bound are dropped and counted, the rest is written once read", async () => {
    const { fd, readAll } = fullablePipe();
    const out = new LineBuffer(fd, { maxWaitingBytes: 256 * 1024, droppedLine: (n) => `dropped ${n}\n` });
    const line = (i: number) => `line ${String(i).padStart(6, "0")} ${"x".repeat(88)}\n`;
    // 1 MB of request lines into a pipe that holds 64 KB: a writer that waited for the reader would never return
    // here, as the reader is this same thread.
    for (let i = 0; i < 10_000; i++) out.writeDroppable(line(i));
    out.write("kept\n");
    out.flush();
    expect(out.waitingLength).toBeGreaterThan(0);
    // The reader reads now and then; the buffer writes what waits on its own (its retry timer) as room appears.
    let text = "";
    await until("every waiting line written", () => {
      text += readAll();
      return out.waitingLength === 0;
    }, { everyMs: 5 });
    text += readAll();
    out.writeDroppable(line(10_000));
    out.flushSync();
    text += readAll();
    const lines = text.split("\n").slice(0, -1);
    const written = lines.filter((l) => l.startsWith("line ")).map((l) => Number(l.slice(5, 11)));
    // In order, none torn, and every line up to the bound (256 KB of 100-byte lines) kept.
    expect(lines.every((l) => l === "kept" || l.startsWith("dropped ") || line(Number(l.slice(5, 11))) === `${l}\n`)).toBe(true);
    expect(written).toEqual([...written].sort((a, b) => a - b));
    expect(written.length).toBeGreaterThan(2000);
    expect(written.length).toBeLessThan(10_000);
    // The line that never drops, then (with the next request line) how many were dropped, then that line.
    const dropped = Number(lines.find((l) => l.startsWith("dropped "))?.slice(8));
    expect(written.length - 1 + dropped).toBe(10_000);
    expect(lines.indexOf("kept")).toBeLessThan(lines.findIndex((l) => l.startsWith("dropped ")));
    expect(lines.at(-1)).toBe(line(10_000).trimEnd());
    closeSync(fd);
  });
});
