// Input hygiene (issue 14): control and bidi-override characters refused in every text field, the e-mail rule, urls normalised (NFKC, lowercase) before uniqueness.
import { beforeAll, describe, expect, it } from "vitest";
import { UserService } from "../../gen/scheduling/v1/user_pb.js";
import { baseUrl, connectClient, newAccount, rest, rpcError, type Json } from "../helpers/api.js";
import { dayFromToday, newEvent, newHost, pageOf, type Host, utcIso } from "../helpers/bookings.js";
import { isEmail } from "../../src/domain/user.js";

const tag = `${process.pid}${Date.now().toString(36)}`.toLowerCase();
const CONTROL = "must not contain control characters";
const BIDI = "must not contain bidirectional override characters";
/** A url's own rule speaks for it (extensions.md "Urls people can tell apart"): an override is a format character. */
const URL_FORMAT = "url contains characters that are not allowed";

describe("control and bidi-override characters", () => {
  let host: Host;
  let event: Json;

  beforeAll(async () => {
    host = await newHost({ timezone: "UTC" });
    event = await newEvent(host, { name: "Hygiene" });
  });

  const patchUser = (user: Json) => rest("PATCH", "/user", { key: host.key, body: { user } });

  it("the user's fields: 422 naming the field; line breaks only where text has lines", async () => {
    const cases: Array<[Json, string]> = [
      [{ full_name: "Ada\u0000Lovelace" }, `user.full_name ${CONTROL}`],
      [{ full_name: "Ada\u202ELovelace" }, `user.full_name ${BIDI}`],
      [{ full_name: "Ada\nLovelace" }, `user.full_name ${CONTROL}`],
      [{ full_name: "Ada\u001BLovelace" }, `user.full_name ${CONTROL}`],
      [{ full_name: "Ada\u2066x\u2069" }, `user.full_name ${BIDI}`],
      [{ url: `u${tag}\u202E` }, URL_FORMAT],
      [{ url: `u${tag}\u2066x` }, URL_FORMAT],
      [{ url: `u${tag}\u0000` }, "url must not contain /, spaces or control characters"],
      [{ bio: "line one\u0007" }, `user.bio ${CONTROL}`],
      [{ bio: "fine\u202Dtext" }, `user.bio ${BIDI}`],
      [{ designation: "CTO\u0085" }, `user.designation ${CONTROL}`],
    ];
    for (const [user, message] of cases) {
      const res = await patchUser(user);
      expect({ status: res.status, message: res.body.message }, JSON.stringify(user)).toEqual({ status: 422, message });
    }
    const ok = await patchUser({ bio: "line one\nline two\r\n\tindented", full_name: "مريم \u200Fالعربية" });
    expect(ok.status).toBe(200);
    expect(ok.body.data.bio).toBe("line one\nline two\r\n\tindented");
  });

  it("the same rule over Connect", async () => {
    const client = connectClient(UserService, "connect-h1", host.key);
    const err = await rpcError(() => client.updateUser({ user: { fullName: "Ada\u0000" } }));
    expect(err.rawMessage).toBe(`user.full_name ${CONTROL}`);
  });

  it("events, questions and the booking form: names, urls, descriptions, addresses, answers", async () => {
    const cases: Array<[string, string, Json, string]> = [
      ["POST", "/events", { event: { name: "Call\u0000", url: `e-${tag}` } }, `event.name ${CONTROL}`],
      ["POST", "/events", { event: { name: "Call", url: `e-${tag}\u202E` } }, URL_FORMAT],
      ["POST", "/events", { event: { name: "Call", url: `e-${tag}`, description: "x\u0000" } }, `event.description ${CONTROL}`],
      ["POST", "/events", { event: { name: "Call", url: `e-${tag}`, location: { name: "in_person", details: "Room\u202E1" } } }, `event.location.details ${BIDI}`],
      ["POST", "/questions", { question: { title: "Company\u0000?", question_type: "one_line" } }, `question.title ${CONTROL}`],
      ["POST", "/questions", { question: { title: "Pick", question_type: "drop_down", question_details: { options: ["a", "b\u202E"] } } }, `question.question_details ${BIDI}`],
    ];
    for (const [method, path, body, message] of cases) {
      const res = await rest(method, path, { key: host.key, body });
      expect({ status: res.status, message: res.body.message }, JSON.stringify(body)).toEqual({ status: 422, message });
    }
  });

  it("the public booking: the booker's name, e-mail, guests and answers; markup in a name is data, kept as sent", async () => {
    const { user, event: url } = pageOf(host, event);
    const path = `/public/users/${user}/events/${url}/bookings`;
    const start = (h: number) => utcIso(dayFromToday(9), `${String(h).padStart(2, "0")}:00`);
    const cases: Array<[Json, string]> = [
      [{ attendee_name: "Ada\u0000", attendee_email: "ada@example.com" }, `booking.attendee_name ${CONTROL}`],
      [{ attendee_name: "Ada\u202E", attendee_email: "ada@example.com" }, `booking.attendee_name ${BIDI}`],
      [{ attendee_name: "Ada", attendee_email: "ada\u0000@example.com" }, `booking.attendee_email ${CONTROL}`],
      [{ attendee_name: "Ada", attendee_email: "moc.elpmaxe\u202E@ada" }, `booking.attendee_email ${BIDI}`],
      [{ attendee_name: "Ada", attendee_email: "<script>@example.com" }, "attendee_email is invalid"],
      [{ attendee_name: "Ada", attendee_email: "ada@example.com", guest_emails: ["g\u0000@example.com"] }, `booking.guest_emails[0] ${CONTROL}`],
      [{ attendee_name: "Ada", attendee_email: "ada@example.com", timezone: "UTC\u0000" }, `booking.timezone ${CONTROL}`],
    ];
    for (const [booking, message] of cases) {
      const res = await rest("POST", path, { body: { booking: { start_time: start(10), ...booking } } });
      expect({ status: res.status, message: res.body.message }, JSON.stringify(booking)).toEqual({ status: 422, message });
    }
    const markup = "<script>alert(1)</script> & <b>";
    const res = await rest("POST", path, { body: { booking: { start_time: start(11), attendee_name: markup, attendee_email: "ada@example.com" } } });
    expect(res.status).toBe(201);
    expect(res.body.data.attendee_name).toBe(markup);
    const cancel = await rest("POST", `/public/bookings/${res.body.data.private_key}/cancel`, { body: { booking: { reason: "sorry\u202E" } } });
    expect({ status: cancel.status, message: cancel.body.message }).toEqual({ status: 422, message: `booking.reason ${BIDI}` });
  });

  it("the admin API: account e-mail and name", async () => {
    const create = (account: Json) => rest("POST", "/admin/accounts", { admin: true, body: { account } });
    const nul = await create({ email: `a-${tag}@example.com`, full_name: "A\u0000" });
    expect({ status: nul.status, message: nul.body.message }).toEqual({ status: 422, message: `account.full_name ${CONTROL}` });
    const bidi = await create({ email: `a-${tag}\u202E@example.com`, full_name: "A" });
    expect({ status: bidi.status, message: bidi.body.message }).toEqual({ status: 422, message: `account.email ${BIDI}` });
    const markup = await create({ email: `<b>${tag}@example.com`, full_name: "A" });
    expect({ status: markup.status, message: markup.body.message }).toEqual({ status: 422, message: "email is invalid" });
  });
});

describe("the e-mail rule", () => {
  it("accepts the addresses people have and refuses what no mail system delivers to", () => {
    for (const ok of ["ada@example.com", "ada.lovelace+tag@mail.example.co.uk", "o'brien@example.ie", "x_y-z@sub-domain.example.org", "用户@例子.广告", "jörg@bücher.de", "a@b.cd", "1@2.example"]) {
      expect(isEmail(ok), ok).toBe(true);
    }
    for (const bad of ["ada", "@example.com", "ada@", "ada@example", "ada@@example.com", "a b@example.com", "ada@exa mple.com", ".ada@example.com", "ada.@example.com", "a..b@example.com", "ada@-example.com", "ada@example-.com", "ada@example..com", "ada@1.2.3.4", "<ada>@example.com", "\"ada\"@example.com", "ada@example.com>", "a(b)@example.com", "a,b@example.com", `${"a".repeat(65)}@example.com`, `a@${"b".repeat(64)}.com`, `a@${"b.".repeat(130)}com`]) {
      expect(isEmail(bad), bad).toBe(false);
    }
  });
});

describe("urls are normalised (NFKC, lowercase) before the uniqueness check and storage", () => {
  it("a full-width look-alike of a taken user url is taken, and a new one is stored as the characters it stands for", async () => {
    const owner = await newAccount();
    const other = await newAccount();
    const url = `bob${tag}`;
    expect((await rest("PATCH", "/user", { key: owner.key, body: { user: { url } } })).status).toBe(200);
    const wide = [...url.toUpperCase()].map((c) => String.fromCodePoint(c.codePointAt(0)! + 0xfee0)).join("");
    const check = await rest("POST", "/users/validate_url_availability", { key: other.key, body: { user: { url: wide } } });
    expect(check.body.data.available).toBe(false);
    const take = await rest("PATCH", "/user", { key: other.key, body: { user: { url: wide } } });
    expect({ status: take.status, message: take.body.message }).toEqual({ status: 422, message: "url has already been taken" });
    const fresh = await rest("PATCH", "/user", { key: other.key, body: { user: { url: `Ｂｏｂ２${tag}` } } });
    expect(fresh.status).toBe(200);
    expect(fresh.body.data.url).toBe(`Bob2${tag}`);
    // A look-alike that normalises to a forbidden character is held to the rule as what it becomes.
    const dot = await rest("PATCH", "/user", { key: other.key, body: { user: { url: `a\u2024b${tag}` } } });
    expect({ status: dot.status, message: dot.body.message }).toEqual({ status: 422, message: "url must not contain ., ? or #" });
  });

  it("a user url's look-alike in one script (dotless ı, accents, marks, a whole word in Cyrillic) is the same url: taken, and its page is the owner's", async () => {
    const owner = await newAccount();
    const other = await newAccount();
    expect((await rest("PATCH", "/user", { key: owner.key, body: { user: { url: `hostai${tag}` } } })).status).toBe(200);
    for (const alike of [`hostaı${tag}`, `HOSTAİ${tag}`, `hostai\u0323${tag}`, `hóstai${tag}`]) {
      const check = await rest("POST", "/users/validate_url_availability", { key: other.key, body: { user: { url: alike } } });
      expect([alike, check.body.data.available]).toEqual([alike, false]);
      const take = await rest("PATCH", "/user", { key: other.key, body: { user: { url: alike } } });
      expect({ alike, status: take.status, message: take.body.message }).toEqual({ alike, status: 422, message: "url has already been taken" });
      const page = await rest("GET", `/public/users/${encodeURIComponent(alike)}`);
      expect([alike, page.status, page.body.data?.url]).toEqual([alike, 200, `hostai${tag}`]);
    }
    // A whole url in Cyrillic letters shaped like the Latin ones (с о а х), digits being of every script.
    const digits = `${process.pid}${Date.now()}`;
    expect((await rest("PATCH", "/user", { key: owner.key, body: { user: { url: `coax-${digits}` } } })).status).toBe(200);
    const cyrillic = await rest("PATCH", "/user", { key: other.key, body: { user: { url: `соах-${digits}` } } });
    expect({ status: cyrillic.status, message: cyrillic.body.message }).toEqual({ status: 422, message: "url has already been taken" });
    // One letter fewer is another url.
    expect((await rest("PATCH", "/user", { key: other.key, body: { user: { url: `hosta${tag}` } } })).status).toBe(200);
  });

  it("a url with characters people cannot tell apart (invisible, format, private use, unassigned, symbols, two scripts) is refused, and a visitor's invisible characters still find the page", async () => {
    const owner = await newAccount();
    const other = await newAccount();
    expect((await rest("PATCH", "/user", { key: owner.key, body: { user: { url: `hostai${tag}` } } })).status).toBe(200);
    const refused = [
      `host\u200bai${tag}`, // ZERO WIDTH SPACE
      `hostai\u2800${tag}`, // BRAILLE PATTERN BLANK
      `ho\u{13430}st${tag}`, // EGYPTIAN HIEROGLYPH VERTICAL JOINER (format)
      `ho\uE000st${tag}`, // private use
      `ho\u0378st${tag}`, // unassigned
      `ho\u2801st${tag}`, // Braille
      `ho\uFFFCst${tag}`, // OBJECT REPLACEMENT CHARACTER
      `hostаi${tag}`, // Latin with a Cyrillic а
      `paypal\u10FDo${tag}`, // Latin with a Georgian letter
      `hᴏstai${tag}`, // a small capital
      `ꮋoꮪꭲꭺꭵ${tag}`, // Cherokee
      `h\u0336ostai${tag}`, // a combining overlay
      `host\uFEFFai${tag}`, // ZERO WIDTH NO-BREAK SPACE (format; JavaScript's \s counts it a space)
      `host\u2060ai${tag}`, // WORD JOINER
      `host\u00ADai${tag}`, // SOFT HYPHEN
      `host\u{F0000}ai${tag}`, // supplementary private use
      `host\u{2FFFF}ai${tag}`, // a noncharacter
      `ho♥stai${tag}`, // a symbol
      `ho😀stai${tag}`, // an emoji
      `мαрия${tag}`, // Cyrillic with a Greek α
    ];
    for (const url of refused) {
      const take = await rest("PATCH", "/user", { key: other.key, body: { user: { url } } });
      expect({ url, status: take.status, message: take.body.message }).toEqual({ url, status: 422, message: "url contains characters that are not allowed" });
    }
    for (const alike of [`host\u200bai${tag}`, `hostai\u2800${tag}`, `hostаi${tag}`]) {
      const page = await rest("GET", `/public/users/${encodeURIComponent(alike)}`);
      expect([alike, page.status, page.body.data?.url]).toEqual([alike, 200, `hostai${tag}`]);
    }
    // Accented Latin and single-script urls of other scripts are urls like any other.
    const n = () => `${process.pid}${Date.now()}`;
    for (const url of [`josé-${tag}`, `Zoë-Åsa-${tag}`, `мария-${n()}`, `東京-${n()}`, `とうきょう-${n()}`, `東京タワー-${n()}`, `ελένη-${n()}`, `مرحبا-${n()}`, `서울-${n()}`, `tokyo東京-${n()}`]) {
      const taken = await rest("PATCH", "/user", { key: other.key, body: { user: { url } } });
      expect([url, taken.status, taken.body.data?.url]).toEqual([url, 200, url]);
      const page = await rest("GET", `/public/users/${encodeURIComponent(url)}`);
      expect([url, page.status]).toEqual([url, 200]);
    }
    const created = await rest("POST", "/admin/accounts", { admin: true, body: { account: { email: `cf-${tag}@example.com`, full_name: "Cf", url: `ab\u{13430}cd-${tag}` } } });
    expect({ status: created.status, message: created.body.message }).toEqual({ status: 422, message: "url contains characters that are not allowed" });
  });

  it("a url that only its case makes look like another (capital I for l) is taken, on PATCH and at account creation", async () => {
    const owner = await newAccount();
    const other = await newAccount();
    expect((await rest("PATCH", "/user", { key: owner.key, body: { user: { url: `bill-${tag}` } } })).status).toBe(200);
    const alike = `biII-${tag}`;
    const check = await rest("POST", "/users/validate_url_availability", { key: other.key, body: { user: { url: alike } } });
    expect(check.body.data.available).toBe(false);
    const take = await rest("PATCH", "/user", { key: other.key, body: { user: { url: alike } } });
    expect({ status: take.status, message: take.body.message }).toEqual({ status: 422, message: "url has already been taken" });
    const created = await rest("POST", "/admin/accounts", { admin: true, body: { account: { email: `eta-${tag}@example.com`, full_name: "Eta", url: `WIII-${tag}` } } });
    expect(created.status).toBe(201);
    const again = await rest("POST", "/admin/accounts", { admin: true, body: { account: { email: `h-${tag}@example.com`, full_name: "H", url: `WIll-${tag}` } } });
    expect({ status: again.status, message: again.body.message }).toEqual({ status: 422, message: "url has already been taken" });
    // Its own url in another case is still the owner's to keep.
    const own = await rest("POST", "/users/validate_url_availability", { key: owner.key, body: { user: { url: `BILL-${tag}` } } });
    expect(own.body.data.available).toBe(true);
  });

  it("a url that reads as a taken one written in capitals or in small letters is taken (ALICE-SMlTH, aIice); ali and all stay two", async () => {
    const owner = await newAccount();
    const other = await newAccount();
    const digits = `${process.pid}${Date.now()}`;
    expect((await rest("PATCH", "/user", { key: owner.key, body: { user: { url: `alice-smith-${digits}` } } })).status).toBe(200);
    expect((await rest("POST", "/admin/accounts", { admin: true, body: { account: { email: `caps-${tag}@example.com`, full_name: "Caps", url: `ALICE-${digits}` } } })).status).toBe(201);
    // A small l among capitals reads as ALICE-SMITH; a capital I among small letters as alice.
    for (const alike of [`ALICE-SMlTH-${digits}`, `aIice-${digits}`]) {
      const check = await rest("POST", "/users/validate_url_availability", { key: other.key, body: { user: { url: alike } } });
      const take = await rest("PATCH", "/user", { key: other.key, body: { user: { url: alike } } });
      expect({ alike, available: check.body.data.available, status: take.status, message: take.body.message }).toEqual({ alike, available: false, status: 422, message: "url has already been taken" });
    }
    const made = await rest("POST", "/admin/accounts", { admin: true, body: { account: { email: `smlth-${tag}@example.com`, full_name: "Smlth", url: `ALICE-SMlTH-${digits}` } } });
    expect({ status: made.status, message: made.body.message }).toEqual({ status: 422, message: "url has already been taken" });
    // What reads apart in every case stays apart.
    expect((await rest("PATCH", "/user", { key: owner.key, body: { user: { url: `all-${digits}` } } })).status).toBe(200);
    expect((await rest("PATCH", "/user", { key: other.key, body: { user: { url: `ali-${digits}` } } })).status).toBe(200);
    // The owner's move let go of its old url's every reading.
    expect((await rest("PATCH", "/user", { key: other.key, body: { user: { url: `ALICE-SMlTH-${digits}` } } })).status).toBe(200);
  });

  it("event urls the same, within the account", async () => {
    const host = await newHost();
    const first = await newEvent(host, { url: `intro-${tag}` });
    const wide = [...`INTRO-${tag}`.toUpperCase()].map((c) => String.fromCodePoint(c.codePointAt(0)! + 0xfee0)).join("");
    const check = await rest("POST", "/events/validate_url_availability", { key: host.key, body: { event: { url: wide } } });
    expect(check.body.data.available).toBe(false);
    const dup = await rest("POST", "/events", { key: host.key, body: { event: { name: "Dup", url: wide } } });
    expect(dup.status).toBe(422);
    const page = await rest("GET", `/public/users/${host.user.url}/events/${encodeURIComponent(wide)}`);
    expect(page.status).toBe(200);
    expect(first.url).toBe(`intro-${tag}`);
    // Look-alikes too (UTS #39 skeleton): `intro1` is `introl`, a whole Cyrillic `соах` is `coax`.
    await newEvent(host, { url: `introl-${tag}`, name: "Intro L" });
    const one = await rest("POST", "/events", { key: host.key, body: { event: { name: "One", url: `intro1-${tag}` } } });
    expect({ status: one.status, message: one.body.message }).toEqual({ status: 422, message: "url has already been taken" });
    const digits = `${process.pid}${Date.now()}`;
    await newEvent(host, { url: `coax-${digits}` });
    const cyrillic = await rest("POST", "/events", { key: host.key, body: { event: { name: "Cyrillic", url: `соах-${digits}` } } });
    expect({ status: cyrillic.status, message: cyrillic.body.message }).toEqual({ status: 422, message: "url has already been taken" });
    const booking = await rest("GET", `/public/users/${host.user.url}/events/${encodeURIComponent(`intro1-${tag}`)}`);
    expect(booking.body.data?.name).toBe("Intro L");
    // What only the case shows (a capital I for an l), and a taken url written in capitals or small letters.
    await newEvent(host, { url: `alice-${digits}` });
    await newEvent(host, { url: `WITHQ-${digits}` });
    for (const alike of [`aIice-${digits}`, `ALlCE-${digits}`, `wlthq-${digits}`]) {
      const check = await rest("POST", "/events/validate_url_availability", { key: host.key, body: { event: { url: alike } } });
      const made = await rest("POST", "/events", { key: host.key, body: { event: { name: "Alike", url: alike } } });
      expect({ alike, available: check.body.data.available, status: made.status, message: made.body.message }).toEqual({ alike, available: false, status: 422, message: "url has already been taken" });
    }
    const renamed = await rest("PATCH", `/events/${first.id}`, { key: host.key, body: { event: { url: `aIice-${digits}` } } });
    expect({ status: renamed.status, message: renamed.body.message }).toEqual({ status: 422, message: "url has already been taken" });
    expect((await rest("POST", "/events", { key: host.key, body: { event: { name: "Ali", url: `ali-${digits}` } } })).status).toBe(201);
    expect((await rest("POST", "/events", { key: host.key, body: { event: { name: "All", url: `all-${digits}` } } })).status).toBe(201);
    for (const url of [`in\u200btro-x-${tag}`, `intrо-x-${tag}`, `in\u{13430}tro-${tag}`, `in\uE000tro-${tag}`, `in\u0378tro-${tag}`, `in\u2801tro-${tag}`, `in\uFFFCtro-${tag}`, `in\uFEFFtro-${tag}`, `intro\u10FDs-${tag}`]) {
      const refused = await rest("POST", "/events", { key: host.key, body: { event: { name: "Refused", url } } });
      expect({ url, status: refused.status, message: refused.body.message }).toEqual({ url, status: 422, message: "url contains characters that are not allowed" });
    }
    for (const url of [`réunion-${tag}`, `встреча-${digits}`, `会議-${digits}`, `かいぎ-${digits}`, `συνάντηση-${digits}`, `اجتماع-${digits}`]) {
      const made = await rest("POST", "/events", { key: host.key, body: { event: { name: "Made", url } } });
      expect([url, made.status, made.body.data?.url]).toEqual([url, 201, url]);
    }
  });

  it("team urls the same: a look-alike of a taken one is taken, the profile's refusals, single-script urls of any script work", async () => {
    const owner = await newAccount();
    const team = (url: string) => rest("POST", "/teams", { key: owner.key, body: { team: { name: "Team", url } } });
    const digits = `${process.pid}${Date.now()}`;
    expect((await team(`coax-${digits}`)).status).toBe(201);
    expect((await team(`with-${digits}`)).status).toBe(201);
    // The last: a small l among capitals reads as the taken url written in capitals (WITH).
    for (const alike of [`соах-${digits}`, `COAX-${digits}`, `cóax-${digits}`, `WlTH-${digits}`]) {
      const taken = await team(alike);
      expect({ alike, status: taken.status, message: taken.body.message }).toEqual({ alike, status: 422, message: "url has already been taken" });
    }
    for (const url of [`te\u{13430}am-${tag}`, `te\uE000am-${tag}`, `te\u0378am-${tag}`, `te\u2801am-${tag}`, `te\uFFFCam-${tag}`, `te\u200Bam-${tag}`, `te\uFEFFam-${tag}`, `team\u10FDs-${tag}`, `tеam-${tag}`, `te♥am-${tag}`]) {
      const refused = await team(url);
      expect({ url, status: refused.status, message: refused.body.message }).toEqual({ url, status: 422, message: "url contains characters that are not allowed" });
    }
    for (const url of [`équipe-${tag}`, `команда-${digits}`, `ομάδα-${digits}`, `チーム-${digits}`, `団体-${digits}`, `فريق-${digits}`]) {
      const made = await team(url);
      expect([url, made.status, made.body.data?.url]).toEqual([url, 201, url]);
      expect([url, (await fetch(`${baseUrl()}/team/${encodeURIComponent(url)}`)).status]).toEqual([url, 200]);
    }
  });
});
