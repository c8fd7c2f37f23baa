// Every environment variable of the service, read and checked once at start.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { oauthProfiles, SettingError, type OAuthClientConfig } from "../providers/index.js";
export interface Config {
  port: number;
  host: string;
  mongodbUri: string | undefined;
  /** DATA_DIR, absolute: where the embedded database's data is kept across restarts (default `.data`); undefined: kept nowhere (`none`, or MONGODB_URI set). */
  dataDir: string | undefined;
  adminToken: string | undefined;
  appUrl: string;
  /** 32-byte key for AES-256-GCM of the stored API key copies. */
  apiKeySecret: Buffer | undefined;
  logLevel: string;
  rateLimits: RateLimitConfig;
  /** How long a replica may answer from an account it read; account writes answer this long after they commit. 0: no cache. */
  accountCacheMs: number;
  /** How long a replica may keep what slots are read from while the account's stamp is unchanged (SLOTS_CACHE_SECONDS). 0: no cache. */
  slotsCacheSeconds: number;
  /** Browser origins allowed by CORS ("*" for any); empty: CORS off. */
  corsOrigins: string[];
  /** A connection that has not said its protocol, or an HTTP/2 connection with no open stream, is closed after this long. */
  idleTimeoutMs: number;
  /** When set, GET /metrics wants `Authorization: Bearer <token>`; unset: /metrics answers loopback requests only. */
  metricsToken: string | undefined;
  /** Diagnostics: when set, every query shape the service sends is appended to this file (the index test reads it). */
  queryShapesFile: string | undefined;
  /** Diagnostics: when set, every database operation is appended to this file (bench/writes.ts counts them). */
  queryLogFile: string | undefined;
  /** Key that seals stored credentials (SECRETS_KEY, default API_KEY_SECRET's value); undefined: a random one per process. */
  secretsKey: Buffer | undefined;
  /** Older keys that may still open credentials sealed before a rotation (SECRETS_KEY_PREVIOUS, comma-separated). */
  secretsKeysPrevious: Buffer[];
  calendars: CalendarConfig;
  /**
   * CALENDAR_READERS_WARM: the calendar reader threads start and read a small calendar before the port opens, so no
   * host's first read waits for a thread to start. `false` starts them with the first read instead: a service whose
   * hosts read no iCalendar calendar (tests, one-off tools) saves their start (a fifth of a start's CPU).
   */
  calendarReadersWarm: boolean;
  effects: EffectsConfig;
  /** OUTBOUND_ALLOW_PRIVATE: webhook, CalDAV and feed URLs may reach loopback and private addresses (development, tests). */
  outboundAllowPrivate: boolean;
  mail: MailConfig;
  /** An HTTP/1.1 request, or a unary RPC's request message, must arrive within this long. */
  requestTimeoutMs: number;
  /** DB_OPERATION_TIMEOUT_MS: the server-side time limit of one database operation (its socket waits 200 ms longer). */
  dbOperationTimeoutMs: number;
  /** Open connections in all; more are reset at once. */
  maxConnections: number;
  /** Open connections from one TCP peer address; 0: no cap. */
  maxConnectionsPerAddress: number;
  /** The operator's OAuth clients by provider name (providers.md "Settings"); a provider without one is not configured. */
  oauthClients: Record<string, OAuthClientConfig | undefined>;
  /** MEETING_WAIT_SECONDS: how long e-mails and webhooks of a booking wait for a meeting link a provider is still making. */
  meetingWaitSeconds: number;
  /** REMINDER_LATE_LIMIT_MINUTES: a reminder delivery more late than this when the service gets to it is skipped. */
  reminderLateLimitMinutes: number;
  /** CLOCK_CONTROL=on: `POST /admin/clock` (admin token) moves the service's clock forward, for tests; off in production. */
  clockControl: boolean;
  /** The booking-change feed (callers.md "Booking changes"). */
  bookingChanges: {
    /** BOOKING_CHANGES_RETENTION_DAYS: how long changes are kept. */
    retentionDays: number;
    /** WATCH_STREAMS_PER_KEY: open WatchBookingChanges streams (and SSE streams) per API key on one replica. */
    streamsPerKey: number;
    /** BOOKING_CHANGES_POLL_MS: how often an open stream looks for changes another replica appended. */
    pollMs: number;
  };
}


/** The outbox worker (src/outbox/, its loop in worker.ts); the defaults suit production, tests shorten them. */
interface EffectsConfig {
  /** EFFECTS_POLL_MS: how often each replica looks for owed changes and due effects. */
  pollMs: number;
  /** EFFECTS_LEASE_MS: how long a claimed effect stays claimed unrenewed (a dead replica's work waits this long). */
  leaseMs: number;
  /**
   * EFFECTS_CONCURRENCY: effects one replica runs at once (default 48). A try mostly waits: on its kind's reads and
   * on the receiver; at 16 a burst's messages queued behind tries waiting on the database (bench:outbox: p99 48 s at
   * 16, 24 s at 48 on one replica).
   */
  concurrency: number;
  /**
   * EFFECTS_PER_ACCOUNT: effects of one account one replica runs at once (default a quarter of EFFECTS_CONCURRENCY,
   * at least 2), so one account's hanging destinations leave the other accounts most of the workers.
   */
  perAccount: number;
  /** EFFECTS_RETRY_SCALE: factor on every retry wait (tests: 0.001). */
  retryScale: number;
}

interface MailConfig {
  /** SMTP_URL: `smtp://[user:pass@]host:port` or `smtps://…`; undefined: no e-mail is sent. Holds a password: never logged. */
  smtpUrl: string | undefined;
  /** MAIL_FROM as given (`Name <address>` or `address`); undefined: `Scheduling <no-reply@HOST of APP_URL>`. */
  from: { name: string; address: string } | undefined;
  /** Deadline for one message, connect to final answer (SMTP_TIMEOUT_MS). */
  timeoutMs: number;
}

interface CalendarConfig {
  /** How old busy times may be when slots are listed (CALENDAR_CACHE_SECONDS). */
  cacheSeconds: number;
  /** Deadline for reading one calendar in one request (CALENDAR_TIMEOUT_MS). */
  timeoutMs: number;
}

/** pino's level names. */
const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

export class ConfigError extends Error {}

interface RateLimitConfig {
  /** Requests per window per API key (account) on authenticated methods; 0: off. */
  perKey: { limit: number; windowSeconds: number };
  /** Requests per window per client address on the public booking methods; 0: off. */
  publicPerAddress: { limit: number; windowSeconds: number };
  /** Proxies in front that append to X-Forwarded-For (0: use the TCP peer address). */
  trustedProxyHops: number;
  /** Bookings and reschedules per booker e-mail per host and window (a UTC day by default); 0: off. */
  bookingsPerBooker: { limit: number; windowSeconds: number };
  /** Bookings and reschedules per host and window, whoever books; 0: off. */
  bookingsPerHost: { limit: number; windowSeconds: number };
  /** Messages to guests per host and booking window (public bookings, cancels, reschedules); 0: off. */
  guestMailsPerHost: { limit: number; windowSeconds: number };
  /** Different booker e-mails per client address per host and hour (public bookings); 0: off. */
  newBookersPerAddress: { limit: number; windowSeconds: number };
}

function parseCount(name: string, raw: string | undefined, fallback: number, min = 0): number {
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < min) throw new ConfigError(`${name} must be an integer of at least ${min}, got "${raw}"`);
  return n;
}

function parseRateLimits(env: NodeJS.ProcessEnv): RateLimitConfig {
  const windowSeconds = parseCount("RATE_LIMIT_WINDOW_SECONDS", env.RATE_LIMIT_WINDOW_SECONDS, 60, 1);
  const bookingWindow = parseCount("BOOKING_LIMIT_WINDOW_SECONDS", env.BOOKING_LIMIT_WINDOW_SECONDS, 86_400, 1);
  return {
    perKey: { limit: parseCount("RATE_LIMIT_PER_KEY", env.RATE_LIMIT_PER_KEY, 600), windowSeconds },
    publicPerAddress: { limit: parseCount("RATE_LIMIT_PUBLIC_PER_IP", env.RATE_LIMIT_PUBLIC_PER_IP, 120), windowSeconds },
    trustedProxyHops: parseCount("TRUSTED_PROXY_HOPS", env.TRUSTED_PROXY_HOPS, 0),
    // A person books a host a few times a day at most, a busy host takes dozens of bookings a day: the defaults
    // leave both alone and stop one address from filling a calendar (one booked 119 slots a minute).
    bookingsPerBooker: { limit: parseCount("BOOKING_LIMIT_PER_BOOKER", env.BOOKING_LIMIT_PER_BOOKER, 10), windowSeconds: bookingWindow },
    bookingsPerHost: { limit: parseCount("BOOKING_LIMIT_PER_HOST", env.BOOKING_LIMIT_PER_HOST, 200), windowSeconds: bookingWindow },
    // Guests are addresses the booker typed in: past this, bookings still work and the booker tells the guests.
    guestMailsPerHost: { limit: parseCount("GUEST_MAIL_LIMIT_PER_HOST", env.GUEST_MAIL_LIMIT_PER_HOST, 100), windowSeconds: bookingWindow },
    // A person books themselves and perhaps a colleague or two; one address booked 93 strangers of one host in
    // 8.6 s (each mailed). An hour, fixed: long enough to stop a burst, short enough for a shared office address.
    newBookersPerAddress: { limit: parseCount("BOOKING_LIMIT_NEW_BOOKERS_PER_ADDRESS", env.BOOKING_LIMIT_NEW_BOOKERS_PER_ADDRESS, 10), windowSeconds: 3600 },
  };
}

/** Above a second, every profile, availability or key change would keep its caller waiting too long. */
const ACCOUNT_CACHE_MAX_MS = 1000;

function parseAccountCacheMs(raw: string | undefined): number {
  const ms = parseCount("ACCOUNT_CACHE_MS", raw, 100);
  if (ms > ACCOUNT_CACHE_MAX_MS) throw new ConfigError(`ACCOUNT_CACHE_MS must be at most ${ACCOUNT_CACHE_MAX_MS}, got "${raw}"`);
  return ms;
}

/** For timeouts: node's timers take at most 2^31-1 ms (and fire at once beyond it); a day is plenty. */
const TIMEOUT_BOUNDS = { min: 100, max: 86_400_000 };

function parseTimeoutMs(name: string, raw: string | undefined): number {
  const ms = parseCount(name, raw, 60_000, TIMEOUT_BOUNDS.min);
  if (ms > TIMEOUT_BOUNDS.max) throw new ConfigError(`${name} must be at most ${TIMEOUT_BOUNDS.max}, got "${raw}"`);
  return ms;
}

/** Descriptors kept for everything that is not a client connection: database pool, embedded server pipes, files. */
const RESERVED_DESCRIPTORS = 256;
const MAX_CONNECTIONS_DEFAULT = 10_000;

/**
 * The soft open-file limit from /proc/self/limits ("Max open files  20000  20000  files"), or undefined where
 * there is no such file (not Linux) or it says "unlimited".
 */
export function openFileLimit(limitsText: string | undefined): number | undefined {
  const m = /^Max open files\s+(\d+)/m.exec(limitsText ?? "");
  return m ? Number(m[1]) : undefined;
}

function readLimits(): string | undefined {
  try {
    return readFileSync("/proc/self/limits", "utf8");
  } catch {
    return undefined;
  }
}

/**
 * MAX_CONNECTIONS: by default 10 000, or fewer when the open-file limit would run out first (keeping
 * RESERVED_DESCRIPTORS for the rest), so a flood of connections is refused by the cap and never by accept()
 * failing with EMFILE for every caller, the database included.
 */
function parseMaxConnections(raw: string | undefined, limitsText: string | undefined): number {
  const fileLimit = openFileLimit(limitsText);
  const fallback = fileLimit === undefined ? MAX_CONNECTIONS_DEFAULT : Math.max(1, Math.min(MAX_CONNECTIONS_DEFAULT, fileLimit - RESERVED_DESCRIPTORS));
  return parseCount("MAX_CONNECTIONS", raw, fallback, 1);
}

/** Short enough to guess is too short for a secret. */
const METRICS_TOKEN_MIN_LENGTH = 16;

function parseMetricsToken(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === "") return undefined;
  if (raw.length < METRICS_TOKEN_MIN_LENGTH || /\s/.test(raw)) {
    throw new ConfigError(`METRICS_TOKEN must be at least ${METRICS_TOKEN_MIN_LENGTH} characters without spaces`);
  }
  return raw;
}

function parsePort(raw: string | undefined): number {
  if (raw === undefined || raw === "") return 8080;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new ConfigError(`PORT must be an integer 0..65535, got "${raw}"`);
  return n;
}

/**
 * Where a command on this machine reaches the service that the same environment starts (`npm run admin`): its
 * `PORT` (default 8080) on its `HOST`, or on the loopback address when it listens on every address.
 */
export function localServiceUrl(env: NodeJS.ProcessEnv = process.env): string {
  const host = env.HOST || "127.0.0.1";
  const reachable = host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "::1" : host;
  return `http://${reachable.includes(":") ? `[${reachable}]` : reachable}:${parsePort(env.PORT)}`;
}

function parseSecret(raw: string | undefined, name = "API_KEY_SECRET"): Buffer | undefined {
  if (raw === undefined || raw === "") return undefined;
  // 64 hex characters are taken as the key itself; anything else is stretched with SHA-256 by the caller.
  if (/^[0-9a-fA-F]{64}$/.test(raw)) return Buffer.from(raw, "hex");
  if (raw.length < 16) throw new ConfigError(`${name} must be 64 hex characters or a passphrase of at least 16 characters`);
  return Buffer.from(raw, "utf8");
}

function parseLogLevel(raw: string | undefined): string {
  const level = (raw || "info").toLowerCase();
  if (!LOG_LEVELS.includes(level)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}, got "${raw}"`);
  return level;
}

function parseOrigins(raw: string | undefined): string[] {
  const origins = (raw ?? "").split(",").map((o) => o.trim().replace(/\/+$/, "")).filter((o) => o !== "");
  for (const o of origins) {
    if (o !== "*" && !/^https?:\/\/[^/\s]+$/.test(o)) throw new ConfigError(`CORS_ORIGINS entries must be "*" or origins like https://app.example.com, got "${o}"`);
  }
  return origins;
}

/** A calendar that takes more than a minute per request would hold every booking page that long. */
const CALENDAR_TIMEOUT_BOUNDS = { min: 100, max: 60_000 };

function parseCalendars(env: NodeJS.ProcessEnv): CalendarConfig {
  const timeoutMs = parseCount("CALENDAR_TIMEOUT_MS", env.CALENDAR_TIMEOUT_MS, 3000, CALENDAR_TIMEOUT_BOUNDS.min);
  if (timeoutMs > CALENDAR_TIMEOUT_BOUNDS.max) throw new ConfigError(`CALENDAR_TIMEOUT_MS must be at most ${CALENDAR_TIMEOUT_BOUNDS.max}, got "${env.CALENDAR_TIMEOUT_MS}"`);
  return { cacheSeconds: parseCount("CALENDAR_CACHE_SECONDS", env.CALENDAR_CACHE_SECONDS, 60), timeoutMs };
}

function parsePreviousSecrets(raw: string | undefined): Buffer[] {
  return (raw ?? "").split(",").map((s) => s.trim()).filter((s) => s !== "").map((s) => parseSecret(s, "SECRETS_KEY_PREVIOUS") as Buffer);
}

function parseFlag(name: string, raw: string | undefined): boolean {
  if (raw === undefined || raw === "" || raw === "false" || raw === "0") return false;
  if (raw === "true" || raw === "1") return true;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function parseOnOff(name: string, raw: string | undefined): boolean {
  if (raw === undefined || raw === "" || raw === "off") return false;
  if (raw === "on") return true;
  throw new ConfigError(`${name} must be on or off, got "${raw}"`);
}

function parseEffects(env: NodeJS.ProcessEnv): EffectsConfig {
  const scaleRaw = env.EFFECTS_RETRY_SCALE;
  const retryScale = scaleRaw === undefined || scaleRaw === "" ? 1 : Number(scaleRaw);
  if (!Number.isFinite(retryScale) || retryScale <= 0 || retryScale > 1) throw new ConfigError(`EFFECTS_RETRY_SCALE must be a number in (0, 1], got "${scaleRaw}"`);
  const concurrency = parseCount("EFFECTS_CONCURRENCY", env.EFFECTS_CONCURRENCY, 48, 1);
  const perAccount = parseCount("EFFECTS_PER_ACCOUNT", env.EFFECTS_PER_ACCOUNT, Math.min(concurrency, Math.max(2, Math.ceil(concurrency / 4))), 1);
  if (perAccount > concurrency) throw new ConfigError(`EFFECTS_PER_ACCOUNT must be at most EFFECTS_CONCURRENCY (${concurrency}), got "${env.EFFECTS_PER_ACCOUNT}"`);
  return {
    pollMs: parseCount("EFFECTS_POLL_MS", env.EFFECTS_POLL_MS, 1000, 10),
    leaseMs: parseCount("EFFECTS_LEASE_MS", env.EFFECTS_LEASE_MS, 20_000, 300),
    concurrency,
    perAccount,
    retryScale,
  };
}

function parseSmtpUrl(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === "") return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    // The value may hold a password: the message names the rule, never the value.
    throw new ConfigError("SMTP_URL must be a URL like smtp://user:pass@host:587 or smtps://host:465");
  }
  if ((url.protocol !== "smtp:" && url.protocol !== "smtps:") || url.hostname === "") {
    throw new ConfigError("SMTP_URL must start with smtp:// or smtps:// and name a host");
  }
  return raw;
}

/** `Name <address>` or a bare address; one line, one address, so it can only ever be the sender. */
function parseMailFrom(raw: string | undefined): { name: string; address: string } | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  const value = raw.trim();
  const m = /^(?:"?([^"<>]*?)"?\s*<([^\s<>@]+@[^\s<>@]+)>|([^\s<>@]+@[^\s<>@]+))$/.exec(value);
  if (m === null || /[\p{Cc}]/u.test(value)) throw new ConfigError(`MAIL_FROM must be "Name <address>" or an address, got "${raw}"`);
  return m[3] !== undefined ? { name: "", address: m[3] } : { name: m[1].trim(), address: m[2] };
}

/** A message that takes longer than this to hand over has an unknown outcome; it is retried with the same Message-ID. */
const SMTP_TIMEOUT_BOUNDS = { min: 1000, max: 300_000 };

function parseMail(env: NodeJS.ProcessEnv): MailConfig {
  const timeoutMs = parseCount("SMTP_TIMEOUT_MS", env.SMTP_TIMEOUT_MS, 30_000, SMTP_TIMEOUT_BOUNDS.min);
  if (timeoutMs > SMTP_TIMEOUT_BOUNDS.max) throw new ConfigError(`SMTP_TIMEOUT_MS must be at most ${SMTP_TIMEOUT_BOUNDS.max}, got "${env.SMTP_TIMEOUT_MS}"`);
  return { smtpUrl: parseSmtpUrl(env.SMTP_URL), from: parseMailFrom(env.MAIL_FROM), timeoutMs };
}

/**
 * The operator's OAuth clients, each read by its provider from the provider's own environment names
 * (src/providers/<name>/settings.ts); a provider without its client set is not configured.
 */
function parseOAuthClients(env: NodeJS.ProcessEnv): Record<string, OAuthClientConfig | undefined> {
  try {
    return Object.fromEntries(oauthProfiles().map((profile) => [profile.provider, profile.settings(env)]));
  } catch (err) {
    if (err instanceof SettingError) throw new ConfigError(err.message);
    throw err;
  }
}

/** Longer than the outbox's first retries and short enough that a confirmation still arrives within minutes. */
const MEETING_WAIT_MAX_SECONDS = 3600;

function parseMeetingWait(raw: string | undefined): number {
  const seconds = parseCount("MEETING_WAIT_SECONDS", raw, 120);
  if (seconds > MEETING_WAIT_MAX_SECONDS) throw new ConfigError(`MEETING_WAIT_SECONDS must be at most ${MEETING_WAIT_MAX_SECONDS}, got "${raw}"`);
  return seconds;
}

/** 30 days, the longest reminder offset: a later limit could send a reminder after its whole point had passed. */
const REMINDER_LATE_LIMIT_MAX = 43_200;

function parseReminderLateLimit(raw: string | undefined): number {
  const minutes = parseCount("REMINDER_LATE_LIMIT_MINUTES", raw, 60, 1);
  if (minutes > REMINDER_LATE_LIMIT_MAX) throw new ConfigError(`REMINDER_LATE_LIMIT_MINUTES must be at most ${REMINDER_LATE_LIMIT_MAX}, got "${raw}"`);
  return minutes;
}

/** extensions.md "Running": `.data/` in the working directory unless DATA_DIR says another folder, or `none`. */
function parseDataDir(raw: string | undefined, mongodbUri: string | undefined): string | undefined {
  if (mongodbUri) return undefined;
  const value = raw === undefined || raw.trim() === "" ? ".data" : raw.trim();
  return value === "none" ? undefined : resolve(value);
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, limitsText: string | undefined = readLimits()): Config {
  const port = parsePort(env.PORT);
  const mongodbUri = env.MONGODB_URI || undefined;
  const apiKeySecret = parseSecret(env.API_KEY_SECRET);
  if (mongodbUri && !apiKeySecret) {
    throw new ConfigError("API_KEY_SECRET is required when MONGODB_URI is set (64 hex characters or a long passphrase); without it stored API keys could not be shown again after a restart");
  }
  return {
    port,
    host: env.HOST || "127.0.0.1",
    mongodbUri,
    dataDir: parseDataDir(env.DATA_DIR, mongodbUri),
    adminToken: env.ADMIN_TOKEN || undefined,
    appUrl: (env.APP_URL || "").replace(/\/+$/, ""),
    apiKeySecret,
    rateLimits: parseRateLimits(env),
    accountCacheMs: parseAccountCacheMs(env.ACCOUNT_CACHE_MS),
    slotsCacheSeconds: parseCount("SLOTS_CACHE_SECONDS", env.SLOTS_CACHE_SECONDS, 30),
    logLevel: parseLogLevel(env.LOG_LEVEL),
    corsOrigins: parseOrigins(env.CORS_ORIGINS),
    idleTimeoutMs: parseTimeoutMs("CONNECTION_IDLE_TIMEOUT_MS", env.CONNECTION_IDLE_TIMEOUT_MS),
    requestTimeoutMs: parseTimeoutMs("REQUEST_TIMEOUT_MS", env.REQUEST_TIMEOUT_MS),
    metricsToken: parseMetricsToken(env.METRICS_TOKEN),
    queryShapesFile: env.QUERY_SHAPES_FILE || undefined,
    queryLogFile: env.QUERY_LOG_FILE || undefined,
    secretsKey: parseSecret(env.SECRETS_KEY, "SECRETS_KEY") ?? apiKeySecret,
    secretsKeysPrevious: parsePreviousSecrets(env.SECRETS_KEY_PREVIOUS),
    calendars: parseCalendars(env),
    calendarReadersWarm: env.CALENDAR_READERS_WARM === undefined || env.CALENDAR_READERS_WARM === "" || parseFlag("CALENDAR_READERS_WARM", env.CALENDAR_READERS_WARM),
    effects: parseEffects(env),
    outboundAllowPrivate: parseFlag("OUTBOUND_ALLOW_PRIVATE", env.OUTBOUND_ALLOW_PRIVATE),
    mail: parseMail(env),
    // Above 1 s a frozen database no longer answers 503 within the 2 s docs/guarantees.md promises; raise it only for a database
    // known to be slow (the embedded server with tens of thousands of bookings, bench/bookings.ts).
    dbOperationTimeoutMs: parseCount("DB_OPERATION_TIMEOUT_MS", env.DB_OPERATION_TIMEOUT_MS, 1000, 100),
    maxConnections: parseMaxConnections(env.MAX_CONNECTIONS, limitsText),
    // A client that needs hundreds of connections is rare; one that opens thousands is a flood. Behind a proxy
    // every connection comes from the proxy's address (the cap is on the TCP peer): raise it, or 0 to turn it off.
    maxConnectionsPerAddress: parseCount("MAX_CONNECTIONS_PER_ADDRESS", env.MAX_CONNECTIONS_PER_ADDRESS, 1000),
    oauthClients: parseOAuthClients(env),
    meetingWaitSeconds: parseMeetingWait(env.MEETING_WAIT_SECONDS),
    reminderLateLimitMinutes: parseReminderLateLimit(env.REMINDER_LATE_LIMIT_MINUTES),
    clockControl: parseOnOff("CLOCK_CONTROL", env.CLOCK_CONTROL),
    bookingChanges: {
      retentionDays: parseCount("BOOKING_CHANGES_RETENTION_DAYS", env.BOOKING_CHANGES_RETENTION_DAYS, 7, 1),
      streamsPerKey: parseCount("WATCH_STREAMS_PER_KEY", env.WATCH_STREAMS_PER_KEY, 10, 1),
      // A stream sees this replica's changes at once; another replica's within this (callers.md: within 1 s, p99).
      pollMs: parseCount("BOOKING_CHANGES_POLL_MS", env.BOOKING_CHANGES_POLL_MS, 200, 10),
    },
  };
}
