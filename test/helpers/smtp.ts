// A real SMTP server on loopback (smtp-server) that keeps every message it accepts, parsed with mailparser, and can be told to refuse.
import net from "node:net";
import { simpleParser, type ParsedMail } from "mailparser";
import { SMTPServer } from "smtp-server";
import { until } from "./wait.js";

export interface ReceivedMail {
  /** The SMTP envelope: who the client said the message is for (RCPT TO), whatever the headers claim. */
  envelope: { from: string; to: string[] };
  raw: string;
  parsed: ParsedMail;
  /** When the message was accepted (Date.now()), for tests that measure when a mail went out. */
  at: number;
}

export interface TestSmtp {
  port: number;
  url: string;
  received: ReceivedMail[];
  /** Refuse the next `count` messages after DATA with `code` (e.g. 451: try again later; 550: never). */
  refuseNext(count: number, code: number): void;
  /** Keep the next message (it counts as received) but answer only after `ms`: past a client's deadline the outcome is unknown to it. */
  answerLateNext(ms: number): void;
  /**
   * The next `count` connections get no greeting (the server seems to hang before anything is handed over); a
   * client gives up on its own deadline, or dies waiting. `connections` counts every connection so far.
   */
  stallNext(count: number): void;
  connections: () => number;
  /** Messages refused so far, with the Message-ID they carried. */
  refused: { messageId: string | undefined; code: number }[];
  /** Resolves once `n` messages matching `pick` arrived (or rejects after `ms`). */
  waitFor(n: number, pick?: (m: ReceivedMail) => boolean, ms?: number): Promise<ReceivedMail[]>;
  stop(): Promise<void>;
}

/** A port nobody listens on right now, for a server that is to come up later. */
export async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

export async function startSmtp(port = 0): Promise<TestSmtp> {
  const received: ReceivedMail[] = [];
  const refused: TestSmtp["refused"] = [];
  let refuse = { count: 0, code: 451 };
  let lateMs = 0;
  let stall = 0;
  let connected = 0;
  const stalled: ((err?: Error) => void)[] = [];
  const server = new SMTPServer({
    onConnect(_session, callback) {
      connected++;
      if (stall > 0) {
        stall--;
        stalled.push(callback);
        return;
      }
      callback();
    },
    // Plain SMTP on loopback: no TLS offer (nodemailer would try STARTTLS against a self-signed certificate) and no login.
    disabledCommands: ["STARTTLS", "AUTH"],
    authOptional: true,
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        const raw = Buffer.concat(chunks).toString("utf8");
        void simpleParser(raw).then((parsed) => {
          if (refuse.count > 0) {
            refuse.count--;
            refused.push({ messageId: parsed.messageId, code: refuse.code });
            callback(Object.assign(new Error(refuse.code >= 500 ? "mailbox unavailable" : "try again later"), { responseCode: refuse.code }));
            return;
          }
          const env = session.envelope;
          received.push({
            envelope: { from: env.mailFrom === false ? "" : env.mailFrom.address, to: env.rcptTo.map((r) => r.address) },
            raw,
            parsed,
            at: Date.now(),
          });
          const late = lateMs;
          lateMs = 0;
          if (late > 0) setTimeout(() => callback(null), late);
          else callback(null);
        }, callback);
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  const actual = (server.server.address() as net.AddressInfo).port;
  return {
    port: actual,
    url: `smtp://127.0.0.1:${actual}`,
    received,
    refused,
    refuseNext(count, code) {
      refuse = { count, code };
    },
    answerLateNext(ms) {
      lateMs = ms;
    },
    stallNext(count) {
      stall = count;
    },
    connections: () => connected,
    waitFor(n, pick = () => true, ms = 20_000) {
      const matching = () => received.filter(pick);
      return until(`${n} mails`, () => matching().length >= n && matching(), {
        timeoutMs: ms,
        everyMs: 20,
        describe: () => `got ${matching().length}: ${received.map((m) => m.parsed.subject).join(" | ")}`,
      });
    },
    stop: () => {
      for (const release of stalled.splice(0)) release(new Error("stopping"));
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
