// Limits read from the environment: connections and requests (defaults, the open-file limit, refusals), the outbox's share per account, the guest-mail cap.
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

describe("calendar readers", () => {
  it("CALENDAR_READERS_WARM defaults to true; false and 0 start the readers with the first read; anything else is refused", () => {
    expect(loadConfig({}).calendarReadersWarm).toBe(true);
    expect(loadConfig({ CALENDAR_READERS_WARM: "" }).calendarReadersWarm).toBe(true);
    expect(loadConfig({ CALENDAR_READERS_WARM: "true" }).calendarReadersWarm).toBe(true);
    expect(loadConfig({ CALENDAR_READERS_WARM: "false" }).calendarReadersWarm).toBe(false);
    expect(loadConfig({ CALENDAR_READERS_WARM: "0" }).calendarReadersWarm).toBe(false);
    expect(() => loadConfig({ CALENDAR_READERS_WARM: "lazy" })).toThrow('CALENDAR_READERS_WARM must be true or false, got "lazy"');
  });
});

describe("issue 25's limits", () => {
  it("EFFECTS_PER_ACCOUNT defaults to a quarter of EFFECTS_CONCURRENCY, at least 2 and at most all of it; more than all is refused", () => {
    expect(loadConfig({}).effects).toMatchObject({ concurrency: 48, perAccount: 12 });
    expect(loadConfig({ EFFECTS_CONCURRENCY: "4" }).effects.perAccount).toBe(2);
    expect(loadConfig({ EFFECTS_CONCURRENCY: "1" }).effects.perAccount).toBe(1);
    expect(loadConfig({ EFFECTS_CONCURRENCY: "40" }).effects.perAccount).toBe(10);
    expect(loadConfig({ EFFECTS_PER_ACCOUNT: "16" }).effects.perAccount).toBe(16);
    expect(() => loadConfig({ EFFECTS_PER_ACCOUNT: "49" })).toThrow("EFFECTS_PER_ACCOUNT must be at most EFFECTS_CONCURRENCY (48)");
    expect(() => loadConfig({ EFFECTS_PER_ACCOUNT: "0" })).toThrow(ConfigError);
  });

  it("GUEST_MAIL_LIMIT_PER_HOST defaults to 100 per booking window; 0 switches it off", () => {
    expect(loadConfig({}).rateLimits.guestMailsPerHost).toEqual({ limit: 100, windowSeconds: 86_400 });
    expect(loadConfig({ GUEST_MAIL_LIMIT_PER_HOST: "0", BOOKING_LIMIT_WINDOW_SECONDS: "3600" }).rateLimits.guestMailsPerHost).toEqual({ limit: 0, windowSeconds: 3600 });
    expect(() => loadConfig({ GUEST_MAIL_LIMIT_PER_HOST: "many" })).toThrow(ConfigError);
  });
});
