// Counts the database round trips and documents written by one public booking, reschedule and cancel (booker and host), in the request and by the outbox after it.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { ADMIN_TOKEN, startServer } from "../test/helpers/server.js";
import { call, expectStatus, type Json } from "./rest.js";

/*
 * Starts the service with QUERY_LOG_FILE (src/db/queryShapes.ts: every operation Mongoose sends, with the
 * documents it writes) and a slow outbox poll, so what the outbox does after a request is only what that request
 * woke. For each action: the operations while the request ran, then those of the next second (the outbox relay
 * planning the change into effects; with no webhook, SMTP or calendar configured it plans none). Counts, not
 * times: they are the same on any machine. Run with `npm run bench:writes`.
 */

const log = join(os.tmpdir(), `bench-writes-${process.pid}.jsonl`);
writeFileSync(log, "");
const server = await startServer({ QUERY_LOG_FILE: log, EFFECTS_POLL_MS: "600000" });

interface Op {
  collection: string;
  operation: string;
  documents: number;
}

let read = 0;
/** The operations logged since the last call. */
function since(): Op[] {
  const lines = readFileSync(log, "utf8").split("\n").filter((l) => l !== "");
  const fresh = lines.slice(read).map((l) => JSON.parse(l) as Op);
  read = lines.length;
  return fresh;
}

function summary(ops: Op[]): string {
  const by = new Map<string, { trips: number; docs: number }>();
  for (const op of ops) {
    const key = `${op.collection}.${op.operation}`;
    const row = by.get(key) ?? { trips: 0, docs: 0 };
    row.trips++;
    row.docs += op.documents;
    by.set(key, row);
  }
  return [...by.entries()].map(([k, v]) => `${k} ${v.trips}${v.docs > 0 ? ` (${v.docs} written)` : ""}`).join(", ");
}

try {
  const base = server.baseUrl;
  const admin = { "x-admin-token": ADMIN_TOKEN };
  const account = expectStatus("account", await call(base, "POST", "/admin/accounts", admin, { account: { email: `writes-${Date.now()}@example.com`, full_name: "Writes Host", timezone: "UTC" } }), 201);
  const key = { "x-api-key": String(account.api_key) };
  const week = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];
  const open = { weekly_hours: Object.fromEntries(week.map((d) => [d, [{ start: "00:00", end: "24:00" }]])), date_overrides: [], minimum_notice_minutes: 0, booking_window_days: 60 };
  expectStatus("availability", await call(base, "PUT", "/user/availability", key, { availability: open }), 200);
  const event = expectStatus("event", await call(base, "POST", "/events", key, { event: { name: "Writes", url: "writes", slot_duration: "30_minutes", padding_duration: "15_minutes" } }), 201);
  const day = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate()) + 3 * 86_400_000;
  const at = (hour: number) => new Date(day + hour * 3_600_000).toISOString();
  const bookPath = `/public/users/${String(account.url)}/events/${String(event.url)}/bookings`;

  const rows: string[] = [];
  const measure = async (name: string, action: () => Promise<Json>): Promise<Json> => {
    since();
    const result = await action();
    const request = since();
    await new Promise((r) => setTimeout(r, 1000));
    const after = since();
    const written = (ops: Op[]) => ops.reduce((n, op) => n + op.documents, 0);
    rows.push(`| ${name} | ${request.length} | ${written(request)} | ${after.length} | ${written(after)} |`);
    rows.push(`|   in the request: ${summary(request)} |||||`);
    rows.push(`|   outbox after it: ${summary(after) || "nothing"} |||||`);
    return result;
  };

  // A first booking so the caches of the account, event and form are warm, as for any later booking.
  expectStatus("warm-up", await call(base, "POST", bookPath, {}, { booking: { start_time: at(1), attendee_name: "Warm", attendee_email: "warm@example.com" } }), 201);
  await new Promise((r) => setTimeout(r, 1000));
  const booked = await measure("public booking", async () => expectStatus("book", await call(base, "POST", bookPath, {}, { booking: { start_time: at(5), attendee_name: "Ada", attendee_email: "ada@example.com" } }), 201));
  const moved = await measure("reschedule", async () => expectStatus("reschedule", await call(base, "POST", `/public/bookings/${String(booked.private_key)}/reschedule`, {}, { booking: { start_time: at(8) } }), 201));
  await measure("cancel (booker)", async () => expectStatus("cancel", await call(base, "POST", `/public/bookings/${String(moved.private_key)}/cancel`, {}, { booking: { reason: "ill" } }), 200));
  const second = expectStatus("book", await call(base, "POST", bookPath, {}, { booking: { start_time: at(11), attendee_name: "Bob", attendee_email: "bob@example.com" } }), 201);
  await new Promise((r) => setTimeout(r, 1000));
  await measure("cancel (host)", async () => expectStatus("host cancel", await call(base, "POST", `/bookings/${String(second.id)}/cancel`, key, { booking: {} }), 200));

  process.stdout.write(
    [
      "| action | round trips in the request | documents written | round trips by the outbox after it | documents written |",
      "|---|---:|---:|---:|---:|",
      ...rows,
    ].join("\n") + "\n",
  );
} finally {
  await server.stop();
  rmSync(log, { force: true });
}
