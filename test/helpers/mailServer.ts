// A server of the test file's own with a real SMTP server beside it (e-mails go out within a poll of 100 ms), the shared calls and fixtures pointed at it; started before the file's tests and stopped after.
import { afterAll, beforeAll } from "vitest";
import { useServer } from "./api.js";
import { fixturesAt, type Fixtures } from "./fixtures.js";
import { startServer, type RunningServer } from "./server.js";
import { startSmtp, type TestSmtp } from "./smtp.js";

export interface MailServer {
  server(): RunningServer;
  smtp(): TestSmtp;
  fixtures(): Fixtures;
}

/** Registers the file's beforeAll and afterAll; `env` adds to the server's settings. */
export function useMailServer(env: Record<string, string> = {}): MailServer {
  let server: RunningServer | undefined;
  let smtp: TestSmtp | undefined;
  beforeAll(async () => {
    smtp = await startSmtp();
    server = await startServer({ SMTP_URL: smtp.url, EFFECTS_POLL_MS: "100", ...env });
    useServer(server.baseUrl);
  });
  afterAll(async () => {
    useServer(undefined);
    await server?.stop();
    await smtp?.stop();
  });
  const started = <T>(what: T | undefined): T => {
    if (what === undefined) throw new Error("the mail server is not started yet (use it inside a test or a beforeAll)");
    return what;
  };
  return { server: () => started(server), smtp: () => started(smtp), fixtures: () => fixturesAt(started(server).baseUrl) };
}
