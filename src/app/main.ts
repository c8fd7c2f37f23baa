// Entry point: read the configuration, connect the database, serve the one port, shut down cleanly on signals.
import { randomBytes } from "node:crypto";
import type http from "node:http";
import mongoose from "mongoose";
import { loadConfig, ConfigError } from "./config.js";
import { connectDatabase, databaseUp, type Database } from "../db/connection.js";
import { EmbeddedUnavailableError } from "../db/embedded.js";
import { DataDirError, openDataDir } from "../db/dataDir.js";
import { recordQueries } from "../db/queryShapes.js";
import { rekeyUserUrls } from "../db/urlKeys.js";
import { errorText, logEvent as log, logger, logLifecycle } from "../platform/log.js";
import { connectRoutes, createHttp1App, createHttp2Handler, createHttp2StreamHandler } from "../platform/http/app.js";
import { withSpecGrpcMessage } from "../platform/transport/grpcMessage.js";
import { listen, type Listener } from "../platform/transport/listen.js";
import { envelope } from "../platform/rest/envelope.js";
import { implementationsOf } from "../platform/rest/table.js";
import { servePicture } from "../features/accounts/picture.js";
import { webRouter } from "../features/pages/router.js";
import { restRoutes } from "./routes.js";
import { oauthCallback } from "../features/oauth/index.js";
import { calendarNoticeSources, sweepOwedNotices } from "../features/calendars/index.js";
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
  // never waits for a thread to start.
  const warmStart = performance.now();
  const readersWarm = warmCalendarReaders().then(
    (threads) => log("info", "calendar readers ready", { threads, ms: Math.round(performance.now() - warmStart) }),
    (err: unknown) => log("warn", "calendar readers did not warm up", { error: errorText(err) }),
  );
  const db: Database = await connectDatabase(config.mongodbUri, (m) => log("warn", m), config.dbOperationTimeoutMs, kept);
  // Urls stored before the look-alike rule are found by it too; a no-op once done.
  const rekeyed = await rekeyUserUrls((m) => log("warn", m));
  if (rekeyed > 0) log("info", "user url keys brought to the look-alike rule", { users: rekeyed });
  const deps = buildDeps(config, secret, () => appUrl);
  const services = createServices(deps);
  let embeddedRunning = db.embedded !== undefined;
  void db.embedded?.exited.then(() => (embeddedRunning = false));
  const metrics = createMetrics(
    {
      databaseUp: () => databaseUp(500),
      embeddedRunning: () => (db.embedded ? embeddedRunning : undefined),
      effectsBacklog: () => effectsBacklog(new Date()),
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
    pages: webRouter({ impls: implementationsOf(services), appUrl: () => appUrl || "http://localhost" }),
    isDatabaseUp: () => databaseUp(),
    requestTimeoutMs: config.requestTimeoutMs,
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
    sweeps: [sweepOwedNotices(deps.wake, [...calendarNoticeSources, meetingNoticeSource])],
    onAttempt: (kind, outcome) => metrics.observeEffectAttempt(kind, outcome),
  });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    const stopBy = Date.now() + SHUTDOWN_LIMIT_MS;
    logLifecycle("shutting down", { signal, in_flight: listener.inFlight() });
    try {
      // Effects in flight finish within the same limit or give their leases back; requests drain meanwhile.
      const drainMs = SHUTDOWN_LIMIT_MS - DATABASE_CLOSE_MS;
      await Promise.all([listener.close(drainMs), effects.stop(drainMs)]);
      connect.stop();
      // Closing includes DATA_DIR's last save: it may use what the drain left of the limit.
      const closeMs = Math.max(DATABASE_CLOSE_MS, stopBy - Date.now());
      let timer: NodeJS.Timeout | undefined;
      const closed = await Promise.race([
        db.close().then(() => true),
        new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), closeMs))),
      ]);
      clearTimeout(timer);
      // Exiting ends the embedded database too (src/db/embedded.ts kills it on exit).
      if (!closed) log("warn", "the database did not close in time; exiting without waiting for it", { waited_ms: closeMs });
      logLifecycle("stopped");
      process.exit(0);
    } catch (err) {
      log("error", "shutdown failed", { error: errorText(err) });
      process.exit(1);
    }
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
  watchParent(() => void stop("parent exited"));
  // Announced only once the handlers above are in place: a supervisor may send SIGTERM the moment it reads this line.
  logLifecycle("listening", { url: `http://${config.host}:${listener.port}`, port: listener.port, embedded_database: db.embedded !== undefined });
  // If the embedded database dies under us, nothing can work: say so and exit non-zero.
  void db.embedded?.exited.then((code) => {
    if (!stopping) {
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
