// Webhook rules (pure): events, URL form, and the spec's retry schedule as the outbox runs it.
import { describe, expect, it } from "vitest";
import { checkWebhookEvents, checkWebhookUrlForm, WEBHOOK_RETRY_DELAYS_MS, WEBHOOK_RETRY_OFFSETS_MS } from "../../src/domain/webhook.js";
import { maxAttempts, retryDelayMs } from "../../src/outbox/retry.js";
import { ApiError } from "../../src/domain/errors.js";

describe("webhook events", () => {
  it("keeps a subset once each, in order", () => {
    expect(checkWebhookEvents(["booking.canceled", "booking.created", "booking.canceled"])).toEqual(["booking.canceled", "booking.created"]);
  });
  it.each([[[]], [["booking.deleted"]], [["booking.created", 3]], [[null]]])("refuses %j", (events) => {
    expect(() => checkWebhookEvents(events)).toThrow(ApiError);
  });
});

describe("webhook url form", () => {
  it("takes http and https, trimmed", () => {
    expect(checkWebhookUrlForm(" https://hooks.example.com/x?y=1 ")).toBe("https://hooks.example.com/x?y=1");
    expect(checkWebhookUrlForm("http://hooks.example.com")).toBe("http://hooks.example.com");
  });
  it.each(["ftp://example.com", "javascript:alert(1)", "example.com/x", "https://user:pw@example.com/", `https://example.com/${"a".repeat(2100)}`])("refuses %s", (url) => {
    expect(() => checkWebhookUrlForm(url)).toThrow(ApiError);
  });
});

describe("webhook retry schedule", () => {
  it("retries at least 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 24 h after the first try, then gives up", () => {
    const random = [0, 0.5, 1];
    for (const r of random) {
      let elapsed = 0;
      const at: number[] = [];
      for (let attempt = 1; ; attempt++) {
        const wait = retryDelayMs(WEBHOOK_RETRY_DELAYS_MS, attempt, r);
        if (wait === undefined) break;
        elapsed += wait;
        at.push(elapsed);
      }
      expect(at).toHaveLength(7);
      at.forEach((t, i) => expect(t).toBeGreaterThanOrEqual(WEBHOOK_RETRY_OFFSETS_MS[i]));
    }
    expect(WEBHOOK_RETRY_OFFSETS_MS).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 86_400_000]);
    expect(maxAttempts(WEBHOOK_RETRY_DELAYS_MS)).toBe(8);
  });
});
