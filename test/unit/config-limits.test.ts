// The connection and request limits read from the environment: defaults, the open-file limit, and refusals.
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig, openFileLimit } from "../../src/app/config.js";

const limits = (soft: string) => `Limit                     Soft Limit           Hard Limit           Units\nMax open files            ${soft}                ${soft}                files\n`;

describe("connection limits", () => {
  it("reads the soft open-file limit, and nothing from text without one", () => {
    expect(openFileLimit(limits("20000"))).toBe(20000);
    expect(openFileLimit(limits("unlimited"))).toBeUndefined();
    expect(openFileLimit(undefined)).toBeUndefined();
  });

  it("MAX_CONNECTIONS defaults to 10000, or to the open-file limit less 256 when that is lower", () => {
    expect(loadConfig({}, limits("1048576")).maxConnections).toBe(10_000);
    expect(loadConfig({}, limits("1024")).maxConnections).toBe(768);
    expect(loadConfig({}, undefined).maxConnections).toBe(10_000);
    expect(loadConfig({ MAX_CONNECTIONS: "50" }, limits("1024")).maxConnections).toBe(50);
  });

  it("MAX_CONNECTIONS_PER_ADDRESS defaults to 1000; 0 switches it off", () => {
    expect(loadConfig({}).maxConnectionsPerAddress).toBe(1000);
    expect(loadConfig({ MAX_CONNECTIONS_PER_ADDRESS: "0" }).maxConnectionsPerAddress).toBe(0);
  });

  it("refuses values that are not counts, and timeouts out of bounds", () => {
    expect(() => loadConfig({ MAX_CONNECTIONS: "0" })).toThrow(ConfigError);
    expect(() => loadConfig({ MAX_CONNECTIONS_PER_ADDRESS: "-1" })).toThrow(ConfigError);
    expect(() => loadConfig({ REQUEST_TIMEOUT_MS: "99" })).toThrow(ConfigError);
    expect(() => loadConfig({ REQUEST_TIMEOUT_MS: "86400001" })).toThrow(ConfigError);
    expect(loadConfig({}).requestTimeoutMs).toBe(60_000);
  });
});
