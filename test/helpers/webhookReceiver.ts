// A webhook receiver on loopback (node:http): verifies every message with standardwebhooks and answers as each test path is told to.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { until } from "./wait.js";

interface Received {
  path: string;
  id: string;
  timestamp: string;
  /** The body parsed after the signature was verified; undefined when verification failed. */
  message: { type: string; timestamp: string; data: Record<string, unknown> } | undefined;
  verifyError: string | undefined;
  at: number;
}

/** How one path answers: a status, or a promise to wait on first (a slow or hanging receiver). */
type Answer = { status: number; hold?: Promise<void> };

export interface Receiver {
  url(path: string): string;
  /** The signing secret of a path's webhook, so its messages can be verified. */
  secret(path: string, secret: string): void;
  /** How the path answers its n-th message (0-based); default 200. */
  answer(path: string, fn: (n: number) => Answer): void;
  received(path: string): Received[];
  /** Waits until `path` got at least `count` messages. */
  waitFor(path: string, count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const secrets = new Map<string, string>();
  const answers = new Map<string, (n: number) => Answer>();
  const got = new Map<string, Received[]>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const path = req.url ?? "/";
      const body = Buffer.concat(chunks).toString("utf8");
      const headers = { "webhook-id": String(req.headers["webhook-id"]), "webhook-timestamp": String(req.headers["webhook-timestamp"]), "webhook-signature": String(req.headers["webhook-signature"]) };
      let message: Received["message"];
      let verifyError: string | undefined;
      try {
        const secret = secrets.get(path);
        if (!secret) throw new Error("no secret for this path");
        message = new Webhook(secret).verify(body, headers) as Received["message"];
        if (req.headers["content-type"] !== "application/json") throw new Error(`content-type ${req.headers["content-type"]}`);
      } catch (err) {
        message = undefined;
        verifyError = err instanceof Error ? err.message : String(err);
      }
      const list = got.get(path) ?? [];
      const n = list.length;
      list.push({ path, id: headers["webhook-id"], timestamp: headers["webhook-timestamp"], message, verifyError, at: Date.now() });
      got.set(path, list);
      const answer = answers.get(path)?.(n) ?? { status: 200 };
      void (answer.hold ?? Promise.resolve()).then(() => {
        if (!res.destroyed) res.writeHead(answer.status, { "content-type": "text/plain" }).end("ok");
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    secret: (path, secret) => void secrets.set(path, secret),
    answer: (path, fn) => void answers.set(path, fn),
    received: (path) => got.get(path) ?? [],
    waitFor(path, count, timeoutMs = 20_000) {
      const list = () => got.get(path) ?? [];
      return until(`${count} messages on ${path}`, () => list().length >= count && list(), { timeoutMs, everyMs: 20, describe: () => `got ${list().length}` });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
