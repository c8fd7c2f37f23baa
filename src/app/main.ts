// Entry point: read the configuration, connect the database, serve the one port, shut down cleanly on signals.
import { randomBytes } from "node:crypto";
import type http from "node:http";
import mongoose from "mongoose";
import { loadConfig, ConfigError } from "./config.js";
import { connectDatabase, databaseUp, type Database } from "../db/connection.js";
import { EmbeddedUnavailableError } from "../db/embedded.js";
import { DataDirError, openDataDir } from "../db/dataDir.js";
import { recordQueries } from "../db/queryShapes.js";
import { errorText, logEvent as log, logger, logLifecycle } from "../platform/log.js";
import { connectRoutes, createHttp1App, createHttp2Handler, createHttp2StreamHandler } from "../platform/http/app.js";
import { withSpecGrpcMessage } from "../platform/transport/grpcMessage.js";
import { listen, type Listener } from "../platform/transport/listen.js";
import { envelope } from "../platform/rest/envelope.js";
import { implementationsOf } from "../platform/rest/table.js";
import { servePicture } from "../features/accounts/picture.js";
import { claimAccountKeys, rekeyUserUrls } from "../features/accounts/writes.js";
import { rekeyEventUrls } from "../features/events/writes.js";
import { copyOlderKeys } from "../features/bookings/keys.js";
import { sweepFeed, sweepMoves } from "../features/bookings/index.js";
import { webRouter } from "../features/pages/router.js";
import { restRoutes } from "./routes.js";
import { oauthCallback } from "../features/oauth/index.js";
import { calendarNoticeSources } from "../features/calendars/index.js";
import { sweepOwedNotices } from "../features/notices/index.js";
import { meetingNoticeSource } from "../features/meetings/index.js";
import { purposeHandlers } from "./purposes.js";
import { corsPolicy, withCors } from "../platform/http/cors.js";
import { createMetrics } from "../platform/http/metrics.js";
import { createObserver, rpcPathsOf } from "../platform/http/observe.js";
import { createServices } from "./services.js";
import { effectKindsOf } from "./effectKinds.js";
import { buildDeps } from "./deps.js";
import { effectsBacklog, stuckEffectsByAccount } from "../outbox/backlog.js";
import { startEffectsWorker } from "../outbox/worker.js";
import { useBufferTextEncoding } from "../platform/transport/textEncoding.js";
import { clockControl } from "../platform/http/clockControl.js";
import { warmCalendarReaders } from "../providers/index.js";

/** The drain limit: from SIGTERM to exit, whatever the clients and the database do. */
const SHUTDOWN_LIMIT_MS = 10_000;
/**
 * Closing the database sends it a last command (endSessions) and waits for its pools; a frozen database would
 * keep that waiting forever. Requests in flight get the rest of the limit.
 */
const DATABASE_CLOSE_MS = 2_000;
const PARENT_CHECK_MS = 1000;
/** How long the start waits for the calendar readers to be warm before it opens the port anyway. */
const READERS_WARM_WAIT_MS = 30_000;

/**
 * Under an npm script (`npm start`) the service belongs to npm: whoever stops npm expects the service to stop with
 * it. The script execs node, so the SIGTERM/SIGINT npm forwards reaches this process; but a SIGKILL or a crash of
 * npm forwards nothing, and we would be left serving, re-parented. So we watch for that and stop as if told to.
 * Started any other way (node directly, a container's PID 1, `nohup ... &`) an exiting parent is no reason to stop.
 */
function watchParent(onGone: () => void): void {
  if (process.env.npm_lifecycle_event === undefined) return;
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onGone();
  }, PARENT_CHECK_MS);
  timer.unref();
}

/** Data kept by an earlier version brought to this one's shape, so it is found as new data is; each a no-op once done. */
async function upgradeStoredData(): Promise<void> {
  // Accounts and bookings kept by an earlier version are found as these ones are (docs/operations.md "Sharding").
  const claimed = await claimAccountKeys();
  if (claimed > 0) log("info", "account e-mails, urls and API keys claimed in account_keys", { claims: claimed });
  const copied = await copyOlderKeys();
  if (copied > 0) log("info", "private keys of earlier bookings copied to booking_keys", { keys: copied });
  // Urls stored before the look-alike rule are found by it too.
  const rekeyed = { users: await rekeyUserUrls((m) => log("warn", m)), events: await rekeyEventUrls((m) => log("warn", m)) };
  if (rekeyed.users + rekeyed.events > 0) log("info", "url keys brought to the look-alike rule", rekeyed);
}

interface Running {
  listener: Listener;
  effects: { stop(ms: number): Promise<unknown> };
  db: Database;
  changeFeed: { close(): void };
}

/**
 * The stop of a running service, once whatever the signal: streams ended, requests and effects drained within
 * SHUTDOWN_LIMIT_MS, the database closed (DATA_DIR's last save), then exit. `stopping.now` tells the rest it began.
 */
function stopper(parts: Running, stopping: { now: boolean }): (signal: string) => Promise<void> {
  return async (signal: string) => {
    if (stopping.now) return;
    stopping.now = true;
    const stopBy = performance.now() + SHUTDOWN_LIMIT_MS;
    logLifecycle("shutting down", { signal, in_flight: parts.listener.inFlight() });
    try {
      // Effects in flight finish within the same limit or give their leases back; requests drain meanwhile.
      const drainMs = SHUTDOWN_LIMIT_MS - DATABASE_CLOSE_MS;
      // Open booking-change streams end now with UNAVAILABLE: their callers resume elsewhere with their last token.
      parts.changeFeed.close();
      await Promise.all([parts.listener.close(drainMs), parts.effects.stop(drainMs)]);
      // Closing includes DATA_DIR's last save: it may use what the drain left of the limit.
      const closeMs = Math.max(DATABASE_CLOSE_MS, stopBy - performance.now());
      let timer: NodeJS.Timeout | undefined;
      const closed = await Promise.race([
        parts.db.close().then(() => true),
        new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), closeMs))),
      ]);
      clearTimeout(timer);
      // Exiting ends the embedded database too (src/db/embedded.ts kills it on exit).
      if (!closed) log("warn", "the database did not close in time; exiting without waiting for it", { waited_ms: closeMs });
      logLifecycle("stopped");
      process.exit(0);
    } catch (err) {
      // A last save of DATA_DIR that failed: the message says what is lost and where the last good copy is.
      if (err instanceof DataDirError) log("error", err.message);
      else log("error", "shutdown failed", { error: errorText(err) });
      process.exit(1);
    }
  };
}

async function main(): Promise<void> {
  const config = loadConfig();
  useBufferTextEncoding();
  logger.level = config.logLevel;
  let appUrl = config.appUrl;
  // Taken before anything starts, so a second service on the same folder stops here, naming the first.
  const kept = config.dataDir === undefined ? undefined : openDataDir(config.dataDir, (m) => log("warn", m));
  // Kept with the data, so the keys it seals (and credentials sealed with SECRETS_KEY's default) open after a restart.
  const secret = config.apiKeySecret ?? kept?.secret() ?? randomBytes(32);
  if (config.queryShapesFile || config.queryLogFile) recordQueries({ shapesFile: config.queryShapesFile, logFile: config.queryLogFile });
  // The calendar reader threads start beside the database and are warm before the port opens: a host's first read
  // never waits for a thread to start (unless CALENDAR_READERS_WARM=false: then the first read starts them).
  const warmStart = performance.now();
  const readersWarm = config.calendarReadersWarm
    ? warmCalendarReaders().then(
        (threads) => log("info", "calendar readers ready", { threads, ms: Math.round(performance.now() - warmStart) }),
        (err: unknown) => log("warn", "calendar readers did not warm up", { error: errorText(err) }),
      )
    : Promise.resolve(log("info", "calendar readers start with the first read (CALENDAR_READERS_WARM=false)"));
  const db: Database = await connectDatabase(config.mongodbUri, (m) => log("warn", m), config.dbOperationTimeoutMs, kept);
  await upgradeStoredData();
  const deps = buildDeps(config, secret, () => appUrl, () => kept?.problem());
  const services = createServices(deps);
  let embeddedRunning = db.embedded !== undefined;
  void db.embedded?.exited.then(() => (embeddedRunning = false));
  const metrics = createMetrics(
    {
      databaseUp: () => databaseUp(500),
      embeddedRunning: () => (db.embedded ? embeddedRunning : undefined),
      effectsBacklog: () => effectsBacklog(deps.clock.now()),
      stuckEffects: stuckEffectsByAccount,
    },
    { token: config.metricsToken },
  );
  metrics.watchPool(mongoose.connection.getClient());
  const base = {
    services,
    restRoutes,
    authenticate: deps.access.authenticate,
    pictures: servePicture,
    oauthCallback: oauthCallback({ ...deps, deadlineMs: config.calendars.timeoutMs * 4 }, purposeHandlers(deps)),
    pages: webRouter({ impls: implementationsOf(services), appUrl: () => appUrl || "http://localhost", clock: deps.clock }),
    isDatabaseUp: () => databaseUp(),
    dataNotKept: () => kept?.problem(),
    requestTimeoutMs: config.requestTimeoutMs,
    clockControl: deps.movableClock ? clockControl(deps.movableClock, config.adminToken) : undefined,
    streamTime: { clock: deps.clock, onMove: deps.movableClock?.onMove.bind(deps.movableClock) },
  };
  const connect = connectRoutes(base);
  // A machine so busy that the readers (at their lower priority) are still starting does not keep the port closed.
  let waited: NodeJS.Timeout | undefined;
  await Promise.race([readersWarm, new Promise<void>((resolve) => (waited = setTimeout(() => resolve(log("warn", "calendar readers still warming up; listening anyway")), READERS_WARM_WAIT_MS)))]);
  clearTimeout(waited);
  const observer = createObserver(rpcPathsOf(connect.routes), metrics);
  const parts = { ...base, observer, metrics };
  const app: http.RequestListener = createHttp1App(parts, connect.routes);
  const h2 = withSpecGrpcMessage(createHttp2Handler(parts, connect.routes));
  const cors = corsPolicy(config.corsOrigins, config.appUrl);
  const h2Streams = createHttp2StreamHandler(parts, (handler) => observer.wrap(withCors(cors, handler)));
  const listener: Listener = await listen(config.host, config.port, observer.wrap(withCors(cors, app)), observer.wrap(withCors(cors, h2)), h2Streams, {
    idleTimeoutMs: config.idleTimeoutMs,
    requestTimeoutMs: config.requestTimeoutMs,
    maxConnections: config.maxConnections,
    maxConnectionsPerAddress: config.maxConnectionsPerAddress,
    onRefused: (reason) => metrics.connectionRefused(reason),
    unparsableBody: (status, message) => JSON.stringify(envelope(status, message, {})),
  });
  metrics.watchConnections(() => listener.connections());
  if (!appUrl) appUrl = `http://localhost:${listener.port}`;
  // Said once, at start: bookings still work, their e-mails are simply not planned.
  if (!deps.mail) log("warn", "SMTP_URL is not set: no e-mail is sent");
  // Started once the port is open, so effects see the final app URL. Every replica runs one; leases keep them apart.
  const effects = startEffectsWorker({
    kinds: effectKindsOf(deps),
    ...config.effects,
    owed: deps.wake,
    clock: deps.clock,
    // The feed's sweep: booking changes a crash kept out of the feed (src/features/bookings/feed.ts); the moves' sweep:
    // reschedules a crash stopped between their two writes (src/features/bookings/moves.ts).
    sweeps: [
      sweepOwedNotices(deps, [...calendarNoticeSources, meetingNoticeSource]),
      async () => void (await sweepFeed(deps.clock.now())),
      async () => void (await sweepMoves(deps.clock.now())),
    ],
    onAttempt: (kind, outcome) => metrics.observeEffectAttempt(kind, outcome),
  });

  const stopping = { now: false };
  const stop = stopper({ listener, effects, db, changeFeed: deps.changeFeed }, stopping);
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
  watchParent(() => void stop("parent exited"));
  // Announced only once the handlers above are in place: a supervisor may send SIGTERM the moment it reads this line.
  logLifecycle("listening", { url: `http://${config.host}:${listener.port}`, port: listener.port, embedded_database: db.embedded !== undefined });
  // If the embedded database dies under us, nothing can work: say so and exit non-zero.
  void db.embedded?.exited.then((code) => {
    if (!stopping.now) {
      log("error", "embedded database exited", { code });
      process.exit(1);
    }
  });
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError || err instanceof EmbeddedUnavailableError || err instanceof DataDirError) log("error", err.message);
  else log("error", "start-up failed", { error: errorText(err) });
  process.exit(1);
});
