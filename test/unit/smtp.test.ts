// The SMTP adapter against a real smtp-server on loopback: headers from data are impossible, Message-ID kept, failures told apart, a deadline held.
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/app/config.js";
import { createSmtpSender, mailSender, type OutgoingMail } from "../../src/features/email/smtp.js";
import { freePort, startSmtp, type TestSmtp } from "../helpers/smtp.js";

const mail = (over: Partial<OutgoingMail> = {}): OutgoingMail => ({
  messageId: `effect-${Math.random().toString(36).slice(2)}@app.example.com`,
  from: { name: "Scheduling", address: "no-reply@app.example.com" },
  to: [{ name: "Ada Lovelace", address: "ada@example.com" }],
  subject: "Confirmed: Intro call",
  text: "Hello",
  html: "<p>Hello</p>",
  language: "en",
  calendars: [{ filename: "invite.ics", content: "BEGIN:VCALENDAR\r\nMETHOD:REQUEST\r\nEND:VCALENDAR\r\n", method: "REQUEST" }],
  ...over,
});

let smtp: TestSmtp;
beforeAll(async () => {
  smtp = await startSmtp();
});
afterAll(async () => {
  await smtp.stop();
});

describe("SMTP adapter", () => {
  it("sends with the given Message-ID, both parts, the calendar part with its method", async () => {
    const m = mail();
    const outcome = await createSmtpSender(smtp.url, 10_000).send(m);
    expect(outcome.ok).toBe(true);
    const [got] = await smtp.waitFor(1, (r) => r.parsed.messageId === `<${m.messageId}>`);
    expect(got.envelope.to).toEqual(["ada@example.com"]);
    expect(got.parsed.text?.trim()).toBe("Hello");
    expect(got.parsed.html).toContain("<p>Hello</p>");
    expect(got.parsed.headers.get("content-language")).toBe("en");
    const ics = got.parsed.attachments.find((a) => a.filename === "invite.ics");
    expect(ics?.contentType).toBe("text/calendar");
    expect(got.raw).toMatch(/Content-Type: text\/calendar; charset=utf-8; method=REQUEST/i);
  });

  it("never turns a name or subject with CRLF into a header or a recipient", async () => {
    const m = mail({
      to: [{ name: "Eve\r\nBcc: victim@example.com", address: "eve@example.com" }],
      cc: [{ name: "Guest\r\nX-Injected: yes", address: "guest@example.com" }],
      from: { name: "Host\r\nBcc: other@example.com", address: "no-reply@app.example.com" },
      subject: "Hi\r\nBcc: victim@example.com",
    });
    expect((await createSmtpSender(smtp.url, 10_000).send(m)).ok).toBe(true);
    const [got] = await smtp.waitFor(1, (r) => r.parsed.messageId === `<${m.messageId}>`);
    expect(got.envelope.to.sort()).toEqual(["eve@example.com", "guest@example.com"]);
    expect(got.parsed.headers.has("bcc")).toBe(false);
    expect(got.parsed.headers.has("x-injected")).toBe(false);
    const headerBlock = got.raw.slice(0, got.raw.indexOf("\r\n\r\n"));
    expect(headerBlock).not.toMatch(/^(Bcc|X-Injected):/im);
  });

  it("says a 4xx is worth retrying and a 5xx is not; the retry keeps the Message-ID", async () => {
    const sender = createSmtpSender(smtp.url, 10_000);
    const m = mail();
    smtp.refuseNext(1, 451);
    const first = await sender.send(m);
    expect(first).toEqual({ ok: false, error: expect.stringContaining("SMTP 451"), permanent: false });
    expect((await sender.send(m)).ok).toBe(true);
    await smtp.waitFor(1, (r) => r.parsed.messageId === `<${m.messageId}>`);
    expect(smtp.refused.at(-1)?.messageId).toBe(`<${m.messageId}>`);

    smtp.refuseNext(1, 550);
    const refused = await sender.send(mail());
    expect(refused).toMatchObject({ ok: false, permanent: true });
  });

  it("reports a server that is down as a failure to retry", async () => {
    const port = await freePort();
    const outcome = await createSmtpSender(`smtp://127.0.0.1:${port}`, 5_000).send(mail());
    expect(outcome).toMatchObject({ ok: false, permanent: false });
    if (!outcome.ok) expect(outcome.error).not.toContain("ada@example.com");
  });

  it("gives up on a server that never answers at the deadline", async () => {
    const silent = net.createServer(() => {}); // accepts, never greets
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const { port } = silent.address() as net.AddressInfo;
    try {
      const outcome = await createSmtpSender(`smtp://127.0.0.1:${port}`, 1_000).send(mail());
      expect(outcome).toMatchObject({ ok: false, permanent: false });
    } finally {
      silent.close();
    }
  });
});

describe("mail settings", () => {
  it("read SMTP_URL, MAIL_FROM and the deadline, and refuse what cannot be right", () => {
    expect(loadConfig({}).mail).toEqual({ smtpUrl: undefined, from: undefined, timeoutMs: 30_000 });
    const c = loadConfig({ SMTP_URL: "smtps://u:p@mail.example.com:465", MAIL_FROM: "Bookings <bookings@example.com>", SMTP_TIMEOUT_MS: "5000" });
    expect(c.mail).toEqual({ smtpUrl: "smtps://u:p@mail.example.com:465", from: { name: "Bookings", address: "bookings@example.com" }, timeoutMs: 5000 });
    expect(loadConfig({ MAIL_FROM: "bookings@example.com" }).mail.from).toEqual({ name: "", address: "bookings@example.com" });
    expect(() => loadConfig({ SMTP_URL: "http://mail.example.com" })).toThrow(/SMTP_URL/);
    expect(() => loadConfig({ SMTP_URL: "smtp://u:secret-pass@" })).toThrow(/SMTP_URL/);
    expect(() => loadConfig({ SMTP_URL: "smtp://u:secret-pass@" })).not.toThrow(/secret-pass/);
    expect(() => loadConfig({ MAIL_FROM: "a@b.c, d@e.f" })).toThrow(/MAIL_FROM/);
    expect(() => loadConfig({ MAIL_FROM: "X <a@b.c>\r\nBcc: d@e.f" })).toThrow(/MAIL_FROM/);
  });

  it("default the sender to no-reply at APP_URL's host", () => {
    expect(mailSender(undefined, "https://book.example.org/base")).toEqual({ name: "Scheduling", address: "no-reply@book.example.org" });
    expect(mailSender({ name: "B", address: "b@example.com" }, "https://x.example")).toEqual({ name: "B", address: "b@example.com" });
  });
});
