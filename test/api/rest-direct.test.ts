// The REST rows answered before Express (`direct`, src/platform/rest/router.ts) answer exactly as the same rows mounted in Express do: every request sent both ways, compared.
import { beforeAll, describe, expect, it } from "vitest";
import { restRoutes } from "../../src/app/routes.js";
import type { RpcRoute } from "../../src/platform/rest/table.js";
import { baseUrl } from "../helpers/api.js";
import { ALWAYS_OPEN, dayFromToday } from "../helpers/fixtures.js";
import { rawRequest, type RawAnswer, type RawRequest } from "../helpers/raw.js";
import { BODY_ROWS, filledPath, rowAuth, rowRecords, type RowRecords } from "../helpers/tableRows.js";

/*
 * The direct path serves only URLs that begin with "/api/v1/" as spelled; Express matches its mount in any case, so
 * "/API/V1/..." reaches the same table through Express (prototype swaps, its router, its req.query). Each request
 * below is sent both ways, one right after the other, and must get the same status, headers and body.
 */
const VIA_EXPRESS = "/API/V1";
const DIRECT = "/api/v1";

/** Headers that differ between any two answers whatever served them. */
const PER_ANSWER = new Set(["date", "x-request-id", "connection", "keep-alive"]);

function comparable(a: RawAnswer): { status: number; headers: Record<string, unknown>; body: unknown } {
  const headers = Object.fromEntries(Object.entries(a.headers).filter(([k]) => !PER_ANSWER.has(k)));
  let body: unknown = a.text;
  try {
    body = JSON.parse(a.text);
  } catch {
    // a HEAD answer has no body; anything else not JSON is compared as text
  }
  return { status: a.status, headers, body };
}

async function bothWays(req: RawRequest): Promise<{ direct: ReturnType<typeof comparable>; express: ReturnType<typeof comparable> }> {
  const direct = comparable(await rawRequest(baseUrl(), { ...req, path: `${DIRECT}${req.path}` }));
  const express = comparable(await rawRequest(baseUrl(), { ...req, path: `${VIA_EXPRESS}${req.path}` }));
  return { direct, express };
}

let records: RowRecords;
let auth: Record<string, string>;
beforeAll(async () => {
  records = await rowRecords();
  auth = rowAuth(records);
});

const GET_ROWS = restRoutes.filter((r): r is RpcRoute => r.kind === "rpc" && r.method === "GET");
const JSON_TYPE = { "content-type": "application/json" };

describe("REST before Express answers as REST through Express", () => {
  it.each(GET_ROWS.map((r) => [`${r.method} ${r.path}`, r] as const))("%s", async (_name, row) => {
    const path = filledPath(row, records);
    const from = dayFromToday(1);
    const { direct, express } = await bothWays({ method: "GET", path: `${path}?date_from=${from}&date_to=${dayFromToday(3)}&status=confirmed&status=canceled&page=1&x[y]=1`, headers: auth });
    expect(direct).toEqual(express);
    // Sanity: the rows were really served (a 404 "endpoint does not exists" both ways would compare equal too).
    expect(direct.body).not.toMatchObject({ message: "endpoint does not exists" });
  });

  it.each(BODY_ROWS.map((r) => [`${r.method} ${r.path} with an unknown field`, r] as const))("%s", async (_name, row) => {
    const { direct, express } = await bothWays({ method: row.method, path: filledPath(row, records), headers: { ...auth, ...JSON_TYPE }, body: JSON.stringify({ zzz_unknown: 1 }) });
    expect(direct).toEqual(express);
    expect(direct.status).toBeGreaterThanOrEqual(400);
  });

  const cases: Array<[string, () => RawRequest]> = [
    ["HEAD of a GET row", () => ({ method: "HEAD", path: "/user", headers: auth })],
    ["a trailing slash", () => ({ method: "GET", path: "/user/", headers: auth })],
    ["a path below the prefix in another case", () => ({ method: "GET", path: "/User/Availability", headers: auth })],
    ["compressed when asked (an answer of 1 KB or more)", () => ({ method: "GET", path: "/user/settings", headers: { ...auth, "accept-encoding": "gzip" } })],
    ["no key", () => ({ method: "GET", path: "/user" })],
    ["a wrong key", () => ({ method: "GET", path: "/events", headers: { "x-api-key": "nope" } })],
    ["a path parameter with bad percent-encoding", () => ({ method: "GET", path: "/events/%E0%A4%A", headers: auth })],
    ["a path parameter that names nothing", () => ({ method: "GET", path: "/events/0123456789abcdef01234567", headers: auth })],
    ["a wrong method on a known path (404 with Allow)", () => ({ method: "DELETE", path: "/user/availability", headers: auth })],
    ["an unknown path", () => ({ method: "GET", path: "/no_such_thing", headers: auth })],
    ["malformed JSON", () => ({ method: "POST", path: "/events", headers: { ...auth, ...JSON_TYPE }, body: "{\"event\": " })],
    ["a body that is not an object", () => ({ method: "POST", path: "/events", headers: { ...auth, ...JSON_TYPE }, body: "[1]" })],
    ["a body declared as text", () => ({ method: "POST", path: "/events", headers: { ...auth, "content-type": "text/plain" }, body: "{}" })],
    ["a refused write", () => ({ method: "POST", path: "/events", headers: { ...auth, ...JSON_TYPE }, body: JSON.stringify({ event: { name: "" } }) })],
    ["a write that changes nothing", () => ({ method: "PUT", path: "/user/availability", headers: { ...auth, ...JSON_TYPE }, body: JSON.stringify({ availability: ALWAYS_OPEN }) })],
    ["a session-only row", () => ({ method: "POST", path: "/two_factor/enable", headers: auth })],
    ["public slots of the event", () => ({ method: "GET", path: `/public/users/${records.host.user.url}/events/${records.event.url}/slots?date_from=${dayFromToday(1)}&date_to=${dayFromToday(7)}` })],
  ];
  it.each(cases)("%s", async (_name, req) => {
    const { direct, express } = await bothWays(req());
    expect(direct).toEqual(express);
  });
});
