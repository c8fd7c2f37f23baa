// Prometheus metrics (GET /metrics): requests by protocol, route or RPC and status; database and embedded-server state; process.
import type { Request, Response } from "express";
import mongoose, { type mongo } from "mongoose";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { sameSecret } from "../../domain/apiKey.js";
import { sendEnvelope } from "../rest/envelope.js";
import { requestRecorder } from "./requestSeries.js";

const CONNECTION_STATES = ["disconnected", "connected", "connecting", "disconnecting"] as const;

export interface MetricsSources {
  /** Pings the database (with its own short timeout). */
  databaseUp(): Promise<boolean>;
  /** The embedded server's state: undefined when MONGODB_URI is used instead. */
  embeddedRunning(): boolean | undefined;
  /** The outbox's backlog (src/outbox/backlog.ts effectsBacklog); absent: the outbox gauges stay empty. */
  effectsBacklog?(): Promise<{ pending: number; oldestAgeSeconds: number }>;
  /** Accounts with stuck effects and how many, most first (src/outbox/backlog.ts stuckEffectsByAccount). */
  stuckEffects?(): Promise<Array<{ account: string; stuck: number }>>;
}

/** Accounts named in scheduling_effects_stuck_top: the few worth looking at, never one series per account. */
const STUCK_TOP_ACCOUNTS = 5;
/** The ranges of scheduling_effects_stuck_accounts: how many accounts have this many stuck effects. */
const STUCK_RANGES: ReadonlyArray<{ label: string; max: number }> = [
  { label: "1", max: 1 },
  { label: "2-9", max: 9 },
  { label: "10-99", max: 99 },
  { label: "100-999", max: 999 },
  { label: "1000+", max: Infinity },
];

export interface MetricsOptions {
  /** METRICS_TOKEN: when set, a scrape must send `Authorization: Bearer <token>` (Prometheus: `authorization.credentials`). */
  token?: string;
}

export interface Metrics {
  registry: Registry;
  observeRequest(protocol: string, route: string, status: string, seconds: number): void;
  /** One try of an outbox effect: ok, retry (failed, tried again later) or failed (given up). */
  observeEffectAttempt(kind: string, outcome: string): void;
  /** Follows the driver's connection pool events (open and checked-out connections). */
  watchPool(client: mongo.MongoClient): void;
  /** Open client connections, read at each scrape. */
  watchConnections(open: () => number): void;
  /** A connection reset by MAX_CONNECTIONS ("total") or MAX_CONNECTIONS_PER_ADDRESS ("per_address"). */
  connectionRefused(reason: "total" | "per_address"): void;
  handler(req: Request, res: Response): Promise<void>;
}

/**
 * A read shared by the gauges one scrape collects (it is let go a turn after it settles); the next scrape reads
 * again. A read that fails, or a source that is absent, gives undefined: those gauges are left empty.
 */
function oncePerScrape<T>(read: () => Promise<T> | undefined): () => Promise<T | undefined> {
  let pending: Promise<T | undefined> | undefined;
  return () => (pending ??= (read() ?? Promise.resolve(undefined)).catch(() => undefined).finally(() => setTimeout(() => (pending = undefined), 0)));
}

/**
 * Without METRICS_TOKEN, /metrics is as if bound to localhost: a request from a loopback address that no proxy
 * forwarded. The service listens on every interface in a container (HOST=0.0.0.0), and the metrics name routes,
 * accounts with stuck effects and the database's state, which are not for the open internet.
 */
function isLocalRequest(req: Request): boolean {
  const peer = (req.socket.remoteAddress ?? "").replace(/^::ffff:/, "");
  const loopback = peer === "::1" || /^127\./.test(peer);
  return loopback && req.headers["x-forwarded-for"] === undefined && req.headers.forwarded === undefined;
}

/** How often the event-loop lag histogram samples (prom-client's `eventLoopMonitoringPrecision`). */
const LAG_SAMPLE_MS = 100;

export function createMetrics(sources: MetricsSources, options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  // The event-loop lag histogram samples every 100 ms instead of prom-client's 10: every stall of 100 ms or more
  // still lands in it, and an idle service wakes 10 times a second for it instead of 100, which was about a third
  // of an idle server's main-thread CPU (bench/RESULTS.md, "Test suite", 2026-12-04).
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: LAG_SAMPLE_MS });
  const labelNames = ["protocol", "route", "status"] as const;
  const requests = new Counter({ name: "scheduling_requests_total", help: "Requests answered, by protocol, route or RPC, and status", labelNames, registers: [registry] });
  const duration = new Histogram({
    name: "scheduling_request_duration_seconds",
    help: "Time from the first byte of the request to the end of the answer",
    labelNames,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });

  new Gauge({
    name: "scheduling_mongodb_connection_state",
    help: "Mongoose connection state: 1 for the current state",
    labelNames: ["state"],
    registers: [registry],
    collect() {
      const current: string = CONNECTION_STATES[mongoose.connection.readyState as number] ?? "disconnected";
      for (const s of CONNECTION_STATES) this.set({ state: s }, s === current ? 1 : 0);
    },
  });
  new Gauge({
    name: "scheduling_mongodb_up",
    help: "1 when the database answered a ping during this scrape",
    registers: [registry],
    async collect() {
      this.set((await sources.databaseUp()) ? 1 : 0);
    },
  });
  new Gauge({
    name: "scheduling_embedded_database_up",
    help: "1 while the embedded database process runs, 0 once it has exited; absent with MONGODB_URI",
    registers: [registry],
    collect() {
      const running = sources.embeddedRunning();
      if (running === undefined) this.reset();
      else this.set(running ? 1 : 0);
    },
  });

  const effectAttempts = new Counter({
    name: "scheduling_effect_attempts_total",
    help: "Outbox effect tries by kind (calendar, email, webhook) and outcome (ok, retry, failed = given up)",
    labelNames: ["kind", "outcome"],
    registers: [registry],
  });
  // One database read per scrape serves both outbox gauges.
  const readBacklog = oncePerScrape(() => sources.effectsBacklog?.());
  new Gauge({
    name: "scheduling_effects_pending",
    help: "Outbox effects owed now: due or running (not those planned for later, nor those waiting for their next try)",
    registers: [registry],
    async collect() {
      const b = await readBacklog();
      if (b === undefined) this.reset();
      else this.set(b.pending);
    },
  });
  new Gauge({
    name: "scheduling_effects_oldest_pending_age_seconds",
    help: "How long the oldest outbox effect owed now (due or running) has been owed (0 when none)",
    registers: [registry],
    async collect() {
      const b = await readBacklog();
      if (b === undefined) this.reset();
      else this.set(b.oldestAgeSeconds);
    },
  });

  /*
   * Stuck effects (pending after a failed try) per account. A label per account would make one series per account
   * that ever had a failing receiver: unbounded, and each a new series for Prometheus to keep. So: the total, the
   * STUCK_TOP_ACCOUNTS accounts with the most (named by user id, enough to find the culprit), and how many accounts
   * fall in each range (one account with 500 or 50 accounts with 10 each read differently) - 11 series at most.
   */
  const readStuck = oncePerScrape(() => sources.stuckEffects?.());
  new Gauge({
    name: "scheduling_effects_stuck",
    help: "Outbox effects waiting for a retry after a failed try (every account)",
    registers: [registry],
    async collect() {
      const rows = await readStuck();
      if (rows === undefined) this.reset();
      else this.set(rows.reduce((sum, r) => sum + r.stuck, 0));
    },
  });
  new Gauge({
    name: "scheduling_effects_stuck_top",
    help: `Stuck outbox effects of the ${STUCK_TOP_ACCOUNTS} accounts (user ids) with the most`,
    labelNames: ["account"],
    registers: [registry],
    async collect() {
      const rows = await readStuck();
      // An account that left the top since the last scrape leaves the output too.
      this.reset();
      for (const r of (rows ?? []).slice(0, STUCK_TOP_ACCOUNTS)) this.set({ account: r.account }, r.stuck);
    },
  });
  new Gauge({
    name: "scheduling_effects_stuck_accounts",
    help: "Accounts by how many stuck outbox effects they have (1, 2-9, 10-99, 100-999, 1000+)",
    labelNames: ["stuck"],
    registers: [registry],
    async collect() {
      const rows = await readStuck();
      if (rows === undefined) {
        this.reset();
        return;
      }
      for (const range of STUCK_RANGES) this.set({ stuck: range.label }, 0);
      for (const r of rows) {
        const range = STUCK_RANGES.find((x) => r.stuck <= x.max) as (typeof STUCK_RANGES)[number];
        this.inc({ stuck: range.label });
      }
    },
  });

  // Connection ids seen open / checked out. A connection made before watching started is counted from its next use.
  const open = new Set<string>();
  const checkedOut = new Set<string>();
  let maxPoolSize: number | undefined;
  new Gauge({
    name: "scheduling_mongodb_pool_connections",
    help: "Driver pool connections: open, and checked out by an operation (in_use)",
    labelNames: ["state"],
    registers: [registry],
    collect() {
      this.set({ state: "open" }, open.size);
      this.set({ state: "in_use" }, checkedOut.size);
    },
  });
  new Gauge({
    name: "scheduling_mongodb_pool_max_size",
    help: "maxPoolSize of the driver's pool per server",
    registers: [registry],
    collect() {
      if (maxPoolSize === undefined) this.reset();
      else this.set(maxPoolSize);
    },
  });

  let openConnections: (() => number) | undefined;
  new Gauge({
    name: "scheduling_connections_open",
    help: "Open client TCP connections, every protocol",
    registers: [registry],
    collect() {
      if (openConnections) this.set(openConnections());
    },
  });
  const refused = new Counter({
    name: "scheduling_connections_refused_total",
    help: "Connections reset on arrival by MAX_CONNECTIONS (reason total) or MAX_CONNECTIONS_PER_ADDRESS (per_address)",
    labelNames: ["reason"],
    registers: [registry],
  });

  return {
    registry,
    watchConnections(open) {
      openConnections = open;
    },
    connectionRefused(reason) {
      refused.inc({ reason });
    },
    observeRequest: requestRecorder(requests, duration),
    observeEffectAttempt(kind, outcome) {
      effectAttempts.inc({ kind, outcome });
    },
    watchPool(client) {
      maxPoolSize = client.options.maxPoolSize;
      const key = (e: { address: string; connectionId: number | "<monitor>" }) => `${e.address}#${e.connectionId}`;
      client.on("connectionCreated", (e) => open.add(key(e)));
      client.on("connectionReady", (e) => open.add(key(e)));
      client.on("connectionCheckedOut", (e) => {
        open.add(key(e));
        checkedOut.add(key(e));
      });
      client.on("connectionCheckedIn", (e) => {
        open.add(key(e));
        checkedOut.delete(key(e));
      });
      client.on("connectionClosed", (e) => {
        open.delete(key(e));
        checkedOut.delete(key(e));
      });
    },
    async handler(req, res) {
      if (options.token !== undefined) {
        const auth = req.headers.authorization ?? "";
        const given = /^bearer /i.test(auth) ? auth.slice("bearer ".length).trim() : "";
        if (!sameSecret(given, options.token)) {
          res.setHeader("WWW-Authenticate", 'Bearer realm="metrics"');
          sendEnvelope(res, 401, "metrics token is missing or invalid");
          return;
        }
      } else if (!isLocalRequest(req)) {
        sendEnvelope(res, 403, "metrics are served to this machine only; set METRICS_TOKEN to scrape them from elsewhere");
        return;
      }
      const text = await registry.metrics();
      res.setHeader("Content-Type", registry.contentType);
      res.setHeader("Cache-Control", "no-store");
      res.send(text);
    },
  };
}
