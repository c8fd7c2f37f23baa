// Unit test for the request metrics' own path (src/platform/http/requestSeries.ts): the same scrape as prom-client's inc and observe for the same requests.
import { Counter, Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { requestRecorder } from "../../src/platform/http/requestSeries.js";

const labelNames = ["protocol", "route", "status"] as const;
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

function metricsOf() {
  const registry = new Registry();
  const requests = new Counter({ name: "t_requests_total", help: "h", labelNames, registers: [registry] });
  const duration = new Histogram({ name: "t_request_duration_seconds", help: "h", labelNames, buckets: BUCKETS, registers: [registry] });
  return { registry, requests, duration };
}

/** Requests of a few label sets, repeated, with durations in every bucket, on the bounds, above the last and at 0. */
const REQUESTS: Array<[string, string, string, number]> = [];
for (let i = 0; i < 300; i++) {
  const protocol = ["grpc", "connect", "rest"][i % 3];
  const route = i % 7 === 0 ? "unmatched" : `scheduling.v1.UserService/GetUser${i % 2}`;
  const status = i % 11 === 0 ? "not_found" : "ok";
  const seconds = i % 13 === 0 ? BUCKETS[i % BUCKETS.length] : i % 17 === 0 ? 12.5 : i % 19 === 0 ? 0 : (i * 0.0173) % 6;
  REQUESTS.push([protocol, route, status, seconds]);
}

describe("requestRecorder", () => {
  it("scrapes the same as prom-client's own inc and observe", async () => {
    const own = metricsOf();
    const plain = metricsOf();
    const record = requestRecorder(own.requests, own.duration);
    for (const [protocol, route, status, seconds] of REQUESTS) {
      record(protocol, route, status, seconds);
      plain.requests.inc({ protocol, route, status });
      plain.duration.observe({ protocol, route, status }, seconds);
    }
    expect(await own.registry.metrics()).toBe(await plain.registry.metrics());
  });

  it("goes on counting right after a reset, and refuses what prom-client refuses", async () => {
    const own = metricsOf();
    const plain = metricsOf();
    const record = requestRecorder(own.requests, own.duration);
    record("grpc", "a", "ok", 0.01);
    record("grpc", "a", "ok", 0.02);
    own.requests.reset();
    own.duration.reset();
    for (const [protocol, route, status, seconds] of REQUESTS.slice(0, 50)) {
      record(protocol, route, status, seconds);
      plain.requests.inc({ protocol, route, status });
      plain.duration.observe({ protocol, route, status }, seconds);
    }
    expect(await own.registry.metrics()).toBe(await plain.registry.metrics());
    expect(() => record("grpc", "a", "ok", Number.NaN)).toThrow(TypeError);
    expect(() => plain.duration.observe({ protocol: "grpc", route: "a", status: "ok" }, Number.NaN)).toThrow(TypeError);
  });
});
