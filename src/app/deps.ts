// The one object of settings and shared parts every feature is made from: read from the configuration once, at start.
import { AccountReads } from "../db/accountVersions.js";
import { appHostOf } from "../domain/bookingEvent.js";
import { MovableClock, systemClock } from "../domain/clock.js";
import { encryptionKey } from "../domain/apiKey.js";
import { answerKeyOf } from "../domain/answerLink.js";
import { keyringOf, type Keyring } from "../domain/secretBox.js";
import { Access, type ServiceDeps } from "../features/accounts/context.js";
import { ChangeFeed } from "../features/bookings/index.js";
import { CalendarReader } from "../features/calendars/index.js";
import type { MailSetup } from "../features/email/effect.js";
import { createSmtpSender } from "../features/email/smtp.js";
import { createWake, type OutboxWake } from "../outbox/wake.js";
import { OAuthClient, oauthProfiles } from "../providers/index.js";
import type { Config } from "./config.js";

/** A quiet booking-change stream gets a bookmark after this: callers.md asks for one at least every 30 s. */
const BOOKMARK_AFTER_MS = 25_000;

export interface Deps extends ServiceDeps {
  /** With CLOCK_CONTROL=on, the clock a test moves (the same object as `clock`); undefined otherwise. */
  movableClock: MovableClock | undefined;
  /** What public slots are read from, kept per process under each account's stamps (src/db/accountVersions.ts). */
  accountReads: AccountReads;
  /** Opens and seals stored secrets (calendar credentials, webhook signing secrets). */
  secrets: Keyring;
  /** OUTBOUND_ALLOW_PRIVATE: webhooks, calendars and feeds may reach loopback and private addresses. */
  allowPrivate: boolean;
  /** The busy times of hosts' calendars, with their cache. */
  calendars: CalendarReader;
  /** How e-mail is sent; undefined without SMTP_URL (then none is planned). */
  mail: MailSetup | undefined;
  /** The operator's OAuth clients by provider name; a provider that connects through OAuth but is missing here is not configured. */
  oauth: ReadonlyMap<string, OAuthClient>;
  /** CORS_ORIGINS: besides APP_URL's origin, where an authorization may send the host back to. */
  corsOrigins: readonly string[];
  /** MEETING_WAIT_SECONDS in ms: how long e-mails and webhooks wait for a meeting link still being made. */
  meetingWaitMs: number;
  /** REMINDER_LATE_LIMIT_MINUTES: how late a reminder delivery may still go out. */
  reminderLateLimitMinutes: number;
  /** This process's outbox wake: writes that record owed work call it, the worker (src/app/main.ts) listens. */
  wake: OutboxWake;
  /** The booking-change feed's lists and streams on this replica (src/features/bookings/changes.ts). */
  changeFeed: ChangeFeed;
  /** The key of the answer links in hosts' request e-mails (src/domain/answerLink.ts), derived from API_KEY_SECRET. */
  answerKey: Buffer;
  /** Why writes cannot be kept now (DATA_DIR's last save failed: src/db/dataDir.ts problem), or undefined. */
  dataNotKept: () => string | undefined;
}

/**
 * Everything the features need, from the configuration. `appUrl` is read when needed: without APP_URL it is the
 * address the service listens on, known only once the port is open. `secret` is API_KEY_SECRET (or a random one).
 */
export function buildDeps(config: Config, secret: Buffer, appUrl: () => string, dataNotKept: () => string | undefined = () => undefined): Deps {
  // One keyring for every stored credential (calendar passwords and feed URLs, webhook secrets).
  const secrets = keyringOf(config.secretsKey ?? secret, config.secretsKeysPrevious);
  const { smtpUrl, from, timeoutMs } = config.mail;
  const movableClock = config.clockControl ? new MovableClock() : undefined;
  const clock = movableClock ?? systemClock;
  const accountReads = new AccountReads({ maxAgeMs: config.slotsCacheSeconds * 1000, leaseMs: config.accountCacheMs, clock });
  const oauth = new Map(
    oauthProfiles().flatMap((profile) => {
      const client = config.oauthClients[profile.provider];
      return client ? [[profile.provider, new OAuthClient(profile, client, clock)] as const] : [];
    }),
  );
  const wake = createWake();
  // A test moved the clock: what fell due (reminders, retries, leases run out, notices to sweep) runs at once.
  movableClock?.onMove(() => wake.owed());
  return {
    clock,
    movableClock,
    appUrl,
    wake,
    changeFeed: new ChangeFeed({
      retentionMs: config.bookingChanges.retentionDays * 86_400_000,
      streamsPerKey: config.bookingChanges.streamsPerKey,
      pollMs: config.bookingChanges.pollMs,
      bookmarkMs: BOOKMARK_AFTER_MS,
      clock,
      onClockMove: movableClock?.onMove.bind(movableClock),
    }),
    dataNotKept,
    apiKeyEncryptionKey: encryptionKey(secret),
    answerKey: answerKeyOf(secret),
    adminToken: config.adminToken,
    access: new Access({ accountCacheMs: config.accountCacheMs, rateLimits: config.rateLimits, clock }),
    accountReads,
    secrets,
    allowPrivate: config.outboundAllowPrivate,
    calendars: new CalendarReader({
      ...config.calendars,
      accountReads,
      allowPrivate: config.outboundAllowPrivate,
      secrets,
      appHost: () => appHostOf(appUrl()),
      oauth,
      wake,
      clock,
    }),
    oauth,
    corsOrigins: config.corsOrigins,
    meetingWaitMs: config.meetingWaitSeconds * 1000,
    reminderLateLimitMinutes: config.reminderLateLimitMinutes,
    mail: smtpUrl ? { sender: createSmtpSender(smtpUrl, timeoutMs), from } : undefined,
  };
}
