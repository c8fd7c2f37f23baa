// Test data made through the public API: accounts, hosts open around the clock, events, imported bookings and bookings, on the run's shared server or any other.
import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import { addDays, utcToWallClock } from "../../src/domain/timezones.js";
import { baseUrl, restAt, type Json } from "./api.js";

const ALL_DAY = [{ start: "00:00", end: "24:00" }];
const WEEK = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"] as const;

/** Availability every day around the clock, no notice: any grid time in the window is bookable. */
export const ALWAYS_OPEN = {
  weekly_hours: Object.fromEntries(WEEK.map((d) => [d, ALL_DAY])),
  date_overrides: [],
  minimum_notice_minutes: 0,
  booking_window_days: 60,
};

/** Working hours 09:00-12:00 every day (in the account's zone), no notice: what the host's desk tests book around. */
export const MORNINGS = {
  weekly_hours: Object.fromEntries(WEEK.map((d) => [d, [{ start: "09:00", end: "12:00" }]])),
  date_overrides: [],
  minimum_notice_minutes: 0,
  booking_window_days: 30,
};

/** The date `days` from today in `zone` (IANA). */
export function dayFromToday(days: number, zone = "UTC"): string {
  return addDays(utcToWallClock(zone, new Date()).date, days);
}

/** The ISO instant of `time` (HH:MM) on `day` (YYYY-MM-DD) in UTC. */
export function utcIso(day: string, time: string): string {
  return new Date(`${day}T${time}:00Z`).toISOString();
}

/** An account as the admin API made it: its API key and the user object (with `id`, `url`, `api_key`). */
export interface Account {
  key: string;
  user: Json;
}
export type Host = Account;

export interface Fixtures {
  /**
   * A fresh account through the admin API; `account` fields override the made-up e-mail (unique in the run) and
   * name. `headers` go with the request (e.g. an X-Request-Id a test looks for in the log).
   */
  newAccount(account?: Json, headers?: Record<string, string>): Promise<Account>;
  /** A fresh account whose availability (default ALWAYS_OPEN) is PUT as given. */
  newHost(account?: Json, availability?: Json): Promise<Host>;
  /** An event of the host through REST; returns the event object. */
  newEvent(host: { key: string }, event?: Json): Promise<Json>;
  /** Bookings moved in through the admin import; returns their ids in order. */
  importBookings(bookings: Json[]): Promise<string[]>;
  /** Books through REST and expects success; returns the booking. */
  book(host: Account, event: Json, booking: Json): Promise<Json>;
}

/** The path parts of an event's booking page. */
export function pageOf(host: Account, event: Json): { user: string; event: string } {
  return { user: host.user.url, event: event.url };
}

let seq = 0;

/** The fixtures of the server at `base` (a URL, or a function read at each call, as api.ts `baseUrl`). */
export function fixturesAt(base: string | (() => string)): Fixtures {
  const at = typeof base === "string" ? () => base : base;
  const api = (method: string, path: string, opts: Parameters<typeof restAt>[3] = {}) => restAt(at(), method, `/api/v1${path}`, opts);
  /**
   * A fixture's write, with a 503 (a loaded database, right after a server started; a full run at load 8-10) retried
   * as a client would, under one Idempotency-Key, so a first try that was applied but answered 503 is answered again
   * rather than made twice. The key is a UUID, long enough for a public write.
   */
  const write = async (method: string, path: string, opts: Parameters<typeof restAt>[3] = {}) => {
    const keyed = { ...opts, headers: { "Idempotency-Key": randomUUID(), ...opts.headers } };
    let res = await api(method, path, keyed);
    for (const until = Date.now() + 20_000; res.status === 503 && Date.now() < until; res = await api(method, path, keyed)) await new Promise((r) => setTimeout(r, 250));
    return res;
  };
  const newAccount: Fixtures["newAccount"] = async (account = {}, headers = {}) => {
    // Unique in the whole run: files run in several processes at once, each counting from 0.
    const n = ++seq;
    const email = `user-${process.pid}-${Date.now().toString(36)}-${n}@example.com`;
    const res = await write("POST", "/admin/accounts", { admin: true, headers, body: { account: { email, full_name: `Test User ${n}`, ...account } } });
    if (res.status !== 201) throw new Error(`account creation failed: ${res.status} ${JSON.stringify(res.body)}`);
    return { key: res.body.data.api_key, user: res.body.data };
  };
  return {
    newAccount,
    async newHost(account = {}, availability = ALWAYS_OPEN) {
      const host = await newAccount(account);
      const res = await write("PUT", "/user/availability", { key: host.key, body: { availability } });
      if (res.status !== 200) throw new Error(`availability failed: ${res.status} ${JSON.stringify(res.body)}`);
      return host;
    },
    async newEvent(host, event = {}) {
      const res = await write("POST", "/events", {
        key: host.key,
        body: { event: { name: "Meeting", url: `meet-${process.pid}-${++seq}`, slot_duration: "30_minutes", padding_duration: "0_minutes", ...event } },
      });
      if (res.status !== 201) throw new Error(`event creation failed: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.data;
    },
    async importBookings(bookings) {
      const res = await write("POST", "/admin/bookings/import", { admin: true, body: { bookings } });
      if (res.status !== 201) throw new Error(`import failed: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.data.ids;
    },
    async book(host, event, booking) {
      const res = await write("POST", `/public/users/${host.user.url}/events/${event.url}/bookings`, {
        body: { booking: { attendee_name: "Ada Lovelace", attendee_email: "ada@example.com", ...booking } },
      });
      if (res.status !== 201) throw new Error(`booking failed: ${res.status} ${JSON.stringify(res.body)}`);
      expect(res.body.message).toBe("booking confirmed");
      return res.body.data;
    },
  };
}

/** The fixtures of the run's shared server, or of the file's own after api.ts `useServer`. */
const shared = fixturesAt(() => baseUrl());
export const { newAccount, newHost, newEvent, importBookings, book } = shared;
