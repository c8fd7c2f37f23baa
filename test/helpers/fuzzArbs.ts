// fast-check generators of hostile input: ids, JSON values of wrong types, `$`-operator objects, bodies shaped like an RPC's request.
import type { DescField, DescMessage } from "@bufbuild/protobuf";
import fc from "fast-check";

/** Values that a NoSQL query would treat as operators if they reached a filter unchanged. */
export const OPERATOR_OBJECTS: readonly unknown[] = [
  { $gt: "" },
  { $ne: null },
  { $ne: "" },
  { $regex: ".*" },
  { $where: "sleep(1000) || true" },
  { $in: ["", null] },
  { $exists: true },
  { $expr: { $eq: [1, 1] } },
  { $nin: [] },
  { "a.b": 1, $set: { api_key_digest: "x" } },
];

const hugeString = fc.integer({ min: 10_000, max: 200_000 }).map((n) => "x".repeat(n));

const nastyString = fc.oneof(
  fc.string(),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom("", " ", "null", "undefined", "[object Object]", "$gt", "../../etc/passwd", "%00", "\u0000", "\uD800", "😀".repeat(81), "a".repeat(81), "<script>alert(1)</script>", "' || '1'=='1", "http://x", "/x", "a.b", "a?b#c"),
  hugeString,
);

const nastyNumber = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -1, 2 ** 31, -(2 ** 31) - 1, 2 ** 53, 1e308, -1e308, 0.5),
);

const scalar: fc.Arbitrary<unknown> = fc.oneof(nastyString, nastyNumber, fc.boolean(), fc.constant(null));

/** Any JSON value, biased to operator objects and wrong types. */
export const nastyValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    { arbitrary: scalar, weight: 5 },
    { arbitrary: fc.constantFrom(...OPERATOR_OBJECTS), weight: 3 },
    { arbitrary: fc.array(tie("value"), { maxLength: 4 }), weight: 1 },
    { arbitrary: fc.dictionary(fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom("$gt", "$where", "__proto__", "constructor", "a.b")), tie("value"), { maxKeys: 4 }), weight: 1 },
  ),
})).value;

/** Ids: valid-looking ObjectIds of other accounts (given), random ones, malformed, huge and unicode ones. */
export function idArb(knownIds: readonly string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { arbitrary: fc.constantFrom(...knownIds), weight: 4 },
    { arbitrary: fc.stringMatching(/^[0-9a-f]{24}$/), weight: 2 },
    { arbitrary: fc.constantFrom("", "0", "zz", "000000000000000000000000", "ffffffffffffffffffffffff", "[object Object]", "null", "$ne", "..", "a/b", "%", "%ZZ", "é", "😀", "\u0000"), weight: 2 },
    { arbitrary: fc.string({ unit: "grapheme", maxLength: 30 }), weight: 1 },
    { arbitrary: fc.integer({ min: 1000, max: 20_000 }).map((n) => "a".repeat(n)), weight: 1 },
  );
}

const pad = (n: number, width: number) => String(n).padStart(width, "0");

/**
 * YYYY-MM-DD strings over the whole four-digit range, biased to the edges: years 0000 and 9999, the bounds the
 * API states (1970-01-01, 2999-12-31) and a day either side, leap days, day 31 of short months.
 */
export const edgeDate: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom("0000-01-01", "0001-01-01", "1969-12-31", "1970-01-01", "2999-12-31", "3000-01-01", "9999-12-31", "9999-12-30", "2024-02-29", "2023-02-29", "2030-04-31", "2030-00-10", "2030-13-01", "10000-01-01", "2030-1-1"), weight: 3 },
  { arbitrary: fc.tuple(fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 0, max: 13 }), fc.integer({ min: 0, max: 32 })).map(([y, m, d]) => `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}`), weight: 2 },
);

/** ISO times over the whole four-digit year range, with the zone designators at their edges. */
const edgeTime: fc.Arbitrary<string> = fc
  .tuple(edgeDate, fc.constantFrom("00:00:00", "23:59:59", "23:30:00", "24:00:00"), fc.constantFrom("Z", "+14:00", "-12:00", "-23:59", "+00:00", ""))
  .map(([d, t, z]) => `${d}T${t}${z}`);

/** A date range: a valid start and an end 0, 31, 32 (the slot limit + 1) or -1 days on, or two edge dates. */
export const edgeRange: fc.Arbitrary<{ date_from: string; date_to: string }> = fc.oneof(
  fc.tuple(fc.constantFrom("2030-01-01", "2999-12-01", "2999-12-31", "1970-01-01"), fc.constantFrom(0, 31, 32, -1, 365)).map(([from, days]) => {
    const d = new Date(`${from}T00:00:00Z`);
    d.setUTCDate(d.getUTCDate() + days);
    return { date_from: from, date_to: d.toISOString().slice(0, 10).replace(/^\+0*/, "") };
  }),
  fc.tuple(edgeDate, edgeDate).map(([date_from, date_to]) => ({ date_from, date_to })),
);

/** page[limit] / page[number] values at every edge: 0, 1, 500, 501, int32 and beyond, exponents, fractions. */
export const edgePageValue: fc.Arbitrary<string> = fc.constantFrom("0", "1", "-1", "10", "499", "500", "501", "2147483647", "2147483648", "-2147483649", "99999999999", "1e9", "1e999", "2.5", "2.0", "0x10", " 7 ", "");

/** Values the service accepts for fields of these names, so that some generated requests get past validation. */
const PLAUSIBLE: Record<string, fc.Arbitrary<unknown>> = {
  question_type: fc.constantFrom("one_line", "multi_line", "radio_button", "check_box", "number", "email"),
  slot_duration: fc.constantFrom("15_minutes", "30_minutes", "1_hour", "2_hours"),
  padding_duration: fc.constantFrom("0_minutes", "10_minutes", "1_hour"),
  color: fc.constantFrom("sage", "grape", "tomato"),
  state: fc.constantFrom("active", "draft", "archived"),
  url: fc.stringMatching(/^[a-z][a-z0-9-]{2,20}$/),
  email: fc.emailAddress(),
  attendee_email: fc.emailAddress(),
  timezone: fc.constantFrom("UTC", "Europe/Berlin", "Eastern Time (US & Canada)", "Asia/Kolkata"),
  name: fc.constantFrom("In-person", "in_person", "phone_call", "Strategy call"),
  title: fc.string({ minLength: 1, maxLength: 30 }),
  full_name: fc.string({ minLength: 1, maxLength: 30 }),
  start_time: fc.oneof(fc.date({ min: new Date("2020-01-01"), max: new Date("2035-01-01"), noInvalidDate: true }).map((d) => d.toISOString()), edgeTime),
  booked_at: edgeTime,
  date: edgeDate,
  date_from: fc.oneof(fc.constantFrom("2030-01-07", "2024-02-29"), edgeDate),
  date_to: fc.oneof(fc.constantFrom("2030-01-14", "2024-03-31"), edgeDate),
  limit: fc.oneof(fc.constantFrom(0, 1, 500, 501, 2 ** 31 - 1, -(2 ** 31)), fc.integer()),
  number: fc.oneof(fc.constantFrom(0, 1, 2, 2 ** 31 - 1, -(2 ** 31)), fc.integer()),
};

/** A plausible scalar for the field's proto type, or a hostile one. */
function fieldValue(field: DescField, ids: fc.Arbitrary<string>, depth: number): fc.Arbitrary<unknown> {
  const hostile = nastyValue;
  if (field.fieldKind === "message" && depth < 3 && !field.message.typeName.startsWith("google.protobuf.")) {
    return fc.oneof({ arbitrary: messageJson(field.message, ids, depth + 1), weight: 3 }, { arbitrary: hostile, weight: 1 });
  }
  if (field.fieldKind === "list" && field.listKind === "message" && depth < 3) {
    return fc.oneof(fc.array(messageJson(field.message, ids, depth + 1), { maxLength: 3 }), hostile);
  }
  const name = field.name;
  if (/(^|_)id$|_key$|^ids$/.test(name)) return fc.oneof({ arbitrary: ids, weight: 3 }, { arbitrary: hostile, weight: 1 });
  const plausible = PLAUSIBLE[name];
  if (plausible) return fc.oneof({ arbitrary: plausible, weight: 4 }, { arbitrary: hostile, weight: 1 });
  if (field.fieldKind === "scalar" && field.scalar === 8 /* BOOL */) return fc.oneof({ arbitrary: fc.boolean(), weight: 4 }, { arbitrary: hostile, weight: 1 });
  return fc.oneof(scalar, hostile);
}

/** A JSON object with some of the message's fields (proto or JSON names), each plausible or hostile. */
export function messageJson(desc: DescMessage, ids: fc.Arbitrary<string>, depth = 0): fc.Arbitrary<Record<string, unknown>> {
  if (desc.fields.length === 0) return fc.dictionary(fc.string({ maxLength: 6 }), nastyValue, { maxKeys: 2 });
  const entries = desc.fields.map((f) =>
    fc.option(fc.tuple(fc.constantFrom(f.name, f.jsonName), fieldValue(f, ids, depth)), { nil: undefined, freq: 4 }),
  );
  return fc.tuple(...entries).map((pairs) => {
    const out: Record<string, unknown> = {};
    for (const p of pairs) if (p !== undefined) out[p[0]] = p[1];
    return out;
  });
}

/** A valid body with one leaf replaced by a hostile value, removed, or left alone: reaches past the first check. */
export function mutated(valid: fc.Arbitrary<Record<string, unknown>>): fc.Arbitrary<Record<string, unknown>> {
  return fc.tuple(valid, fc.nat(), fc.constantFrom("replace", "replace", "delete", "keep"), nastyValue).map(([body, pick, how, value]) => {
    const copy = structuredClone(body);
    const leaves: Array<[Record<string, unknown>, string]> = [];
    const walk = (o: Record<string, unknown>) => {
      for (const [k, v] of Object.entries(o)) {
        leaves.push([o, k]);
        if (v && typeof v === "object" && !Array.isArray(v)) walk(v as Record<string, unknown>);
      }
    };
    walk(copy);
    if (how === "keep" || leaves.length === 0) return copy;
    const [obj, key] = leaves[pick % leaves.length];
    if (how === "delete") delete obj[key];
    else obj[key] = value;
    return copy;
  });
}

const slug = fc.stringMatching(/^[a-z][a-z0-9-]{3,20}$/);
const interval = fc.constantFrom({ start: "09:00", end: "12:00" }, { start: "13:00", end: "17:00" });

/** Bodies the REST rows accept, by "METHOD path". */
export const VALID_BODIES: Record<string, fc.Arbitrary<Record<string, unknown>>> = {
  "POST /events": fc.record({ event: fc.record({ name: fc.constantFrom("Intro", "Deep dive"), url: slug, slot_duration: PLAUSIBLE.slot_duration, color: PLAUSIBLE.color, location: fc.constant({ name: "in_person", details: "Office" }), description: fc.constant("About") }) }),
  "PATCH /events/:id": fc.record({ event: fc.record({ name: fc.constantFrom("Renamed"), url: slug, active: fc.boolean(), padding_duration: PLAUSIBLE.padding_duration }) }),
  "POST /events/validate_url_availability": fc.record({ event: fc.record({ url: slug }) }),
  "POST /questions": fc.record({ question: fc.record({ title: fc.constantFrom("Company?", "Phone"), question_type: fc.constantFrom("one_line", "multi_line", "number"), state: PLAUSIBLE.state }) }),
  "PATCH /questions/:id": fc.record({ question: fc.record({ title: fc.constantFrom("Renamed?"), state: PLAUSIBLE.state }) }),
  "PATCH /user": fc.record({ user: fc.record({ bio: fc.constantFrom("Hi", ""), designation: fc.constantFrom("CTO"), timezone: PLAUSIBLE.timezone, url: slug }) }),
  "POST /users/validate_url_availability": fc.record({ user: fc.record({ url: slug }) }),
  "PUT /user/availability": fc.record({
    availability: fc.record({
      weekly_hours: fc.record({ monday: fc.array(interval, { maxLength: 1 }), tuesday: fc.constant([]), wednesday: fc.constant([{ start: "10:00", end: "11:00" }]), thursday: fc.constant([]), friday: fc.constant([]), saturday: fc.constant([]), sunday: fc.constant([]) }),
      date_overrides: fc.constant([{ date: "2030-12-24", intervals: [] }]),
      minimum_notice_minutes: fc.constantFrom(0, 60),
      booking_window_days: fc.constantFrom(30, 60),
    }),
  }),
};
