// Moves a test server's clock (CLOCK_CONTROL=on, POST /admin/clock): tests of reminders, expiry, caches, leases and limits' windows move time instead of waiting for it.
import { ADMIN_TOKEN } from "./server.js";

/** What a server started with it lets a test move its clock (and what its own servers add to their env). */
export const CLOCK_CONTROL_ENV = { CLOCK_CONTROL: "on" } as const;

/**
 * Moves the clock of every server given (base URLs or anything with `baseUrl`) `ms` forward, all of them by the
 * same amount (replicas of one database must agree on the time), and wakes what waits on time there. Answers
 * the time each server reads now.
 */
export async function advanceClock(servers: string | { baseUrl: string } | readonly (string | { baseUrl: string })[], ms: number): Promise<Date[]> {
  const list = Array.isArray(servers) ? servers : [servers];
  return Promise.all(
    list.map(async (s: string | { baseUrl: string }) => {
      const base = typeof s === "string" ? s : s.baseUrl;
      const res = await fetch(`${base}/admin/clock`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-admin-token": ADMIN_TOKEN },
        body: JSON.stringify({ advance_ms: Math.round(ms) }),
      });
      const body = (await res.json()) as { message?: string; data?: { now?: string } };
      if (res.status !== 200) throw new Error(`${base} did not move its clock (${res.status} ${body.message ?? ""}): start it with CLOCK_CONTROL=on`);
      return new Date(String(body.data?.now));
    }),
  );
}

/**
 * Moves each server's clock to `at` if it is behind it: a replica started after another's clock was moved starts
 * at the system's time, behind the leases and claims the other wrote in its own time. Answers the time each reads.
 */
export async function clockAtLeast(servers: string | { baseUrl: string } | readonly (string | { baseUrl: string })[], at: Date): Promise<Date[]> {
  const list = Array.isArray(servers) ? servers : [servers];
  return Promise.all(
    list.map(async (s: string | { baseUrl: string }) => {
      const [now] = await advanceClock(s, 0);
      return now.getTime() >= at.getTime() ? now : (await advanceClock(s, at.getTime() - now.getTime()))[0];
    }),
  );
}
