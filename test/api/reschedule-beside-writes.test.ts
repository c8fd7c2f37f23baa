// Reschedules beside other writes of the bookings: every booking answered stays, every note written stands, every move is whole (src/features/bookings/moves.ts: a move in a transaction on the embedded server dropped the writes made beside it).
import { describe, expect, it } from "vitest";
import { rest, type Json } from "../helpers/api.js";
import { book, dayFromToday, newEvent, newHost, utcIso } from "../helpers/bookings.js";

/** Half-hour slots of day `day` from 00:00 (the host is always open): `n` of them, from slot `from`. */
const slots = (day: number, from: number, n: number) =>
  Array.from({ length: n }, (_, i) => utcIso(dayFromToday(day), `${String(Math.floor((from + i) / 2)).padStart(2, "0")}:${(from + i) % 2 ? "30" : "00"}`));

/** Bursts tried, each on a day of its own, until one has a move and a booking answered beside each other. */
const BURSTS = 4;

describe("reschedules beside bookings, edits and cancels of the same host", () => {
  it("lose none of them: each booking answered is found, each note and cancel stands, each move's new booking is confirmed at its time and its old one names it", async () => {
    const host = await newHost();
    const event = await newEvent(host);
    const get = (id: unknown) => rest("GET", `/bookings/${String(id)}`, { key: host.key });
    /** One burst on `day`, every answered write checked; how many moves and bookings were answered in it. */
    const burst = async (day: number): Promise<number> => {
      // One after another: the service may answer a burst of bookings 503 on a loaded machine, and these are not what is tested.
      const [moving, edited, canceled]: Json[][] = [[], [], []];
      for (const [list, from] of [[moving, 0], [edited, 8], [canceled, 16]] as const) for (const start of slots(day, from, 8)) list.push(await book(host, event, { start_time: start }));
      const [movedTo, bookedAt] = [slots(day, 24, 8), slots(day, 32, 8)];

      // All at once: the moves, new bookings, host notes on other bookings, and cancels.
      const [moves, made, notes, cancels] = await Promise.all([
        Promise.all(moving.map((b, i) => rest("POST", `/public/bookings/${String(b.private_key)}/reschedule`, { body: { booking: { start_time: movedTo[i] } } }))),
        Promise.all(bookedAt.map((start) => rest("POST", `/public/users/${host.user.url}/events/${String(event.url)}/bookings`, { body: { booking: { start_time: start, attendee_name: "Ada", attendee_email: "ada@example.com" } } }))),
        Promise.all(edited.map((b, i) => rest("PATCH", `/bookings/${String(b.id)}`, { key: host.key, body: { booking: { internal_notes: `note ${i}` } } }))),
        Promise.all(canceled.map((b) => rest("POST", `/bookings/${String(b.id)}/cancel`, { key: host.key, body: { booking: {} } }))),
      ]);
      // A loaded machine may answer some 503 (the database past its deadline: written or not); what was answered stands.
      const answered = <T>(list: T[], answers: { status: number; body: Json }[], status: number) => {
        expect(answers.map((r) => (r.status === 503 ? status : r.status))).toEqual(list.map(() => status));
        return list.flatMap((item, i) => (answers[i].status === status ? [{ item, answer: answers[i] }] : []));
      };
      const [movesDone, madeDone] = [answered(moving, moves, 201), answered(bookedAt, made, 201)];
      const [notesDone, cancelsDone] = [answered(edited, notes, 200), answered(canceled, cancels, 200)];

      const stored = async (ids: unknown[]) => (await Promise.all(ids.map(get))).map((r) => (r.status === 200 ? (r.body.data as Json) : r.status));
      expect((await stored(madeDone.map((d) => d.answer.body.data.id))).map((b) => b.status ?? b)).toEqual(madeDone.map(() => "confirmed"));
      expect((await stored(notesDone.map((d) => d.item.id))).map((b) => b.internal_notes ?? b)).toEqual(notesDone.map((d) => `note ${edited.indexOf(d.item)}`));
      expect((await stored(cancelsDone.map((d) => d.item.id))).map((b) => b.status ?? b)).toEqual(cancelsDone.map(() => "canceled"));
      expect((await stored(movesDone.map((d) => d.item.id))).map((b) => [b.status, b.next_booking_id])).toEqual(movesDone.map((d) => ["rescheduled", d.answer.body.data.id]));
      const newTimes = movesDone.map((d) => movedTo[moving.indexOf(d.item)]);
      expect((await stored(movesDone.map((d) => d.answer.body.data.id))).map((b) => [b.status, b.start_time])).toEqual(newTimes.map((start) => ["confirmed", start]));
      return movesDone.length * madeDone.length;
    };
    // A loaded machine may answer a whole burst 503; then another, so the burst's writes did run beside each other.
    let together = 0;
    for (let n = 0; n < BURSTS && together === 0; n++) together = await burst(3 + n);
    expect(together, `no move and booking answered beside each other in ${BURSTS} bursts`).toBeGreaterThan(0);
  }, 240_000);
});
