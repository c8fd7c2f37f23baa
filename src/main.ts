// Entry point: read the configuration, connect the database, serve the one port, shut down cleanly on signals.
import { randomBytes } from "node:crypto";
import { loadConfig, ConfigError } from "./config.js";
import { connectDatabase, type Database } from "./db/connection.js";
import { EmbeddedUnavailableError } from "./db/embedded.js";
import { encryptionKey } from "./domain/apiKey.js";
import { connectRoutes, createHttp1App, createHttp2Handler, databaseUp } from "./server/app.js";
import { withSpecGrpcMessage } from "./server/grpcMessage.js";
import { listen, type Listener } from "./server/listen.js";
import { configureRateLimits } from "./services/context.js";
import { createServices } from "./services/index.js";

const SHUTDOWN_GRACE_MS = 10_000;

function log(level: "info" | "warn" | "error", msg: string, extra: Record<string, unknown> = {}): void {
  process.stderr.write(JSON.stringify({ level, time: new Date().toISOString(), msg, ...extra }) + "\n");
}

async function main(): Promise<void> {
  const config = loadConfig();
  let appUrl = config.appUrl;
  const secret = config.apiKeySecret ?? randomBytes(32);
  const db: Database = await connectDatabase(config.mongodbUri, (m) => log("warn", m));
  configureRateLimits(config.rateLimits);
  const services = createServices({ appUrl: () => appUrl, apiKeyEncryptionKey: encryptionKey(secret), adminToken: config.adminToken });
  const parts = { services, isDatabaseUp: () => databaseUp() };
  const connect = connectRoutes(parts);
  const app = createHttp1App(parts, connect.routes);
  const listener: Listener = await listen(config.host, config.port, app, withSpecGrpcMessage(createHttp2Handler(parts, connect.routes)));
  if (!appUrl) appUrl = `http://localhost:${listener.port}`;
  log("info", "listening", { url: `http://${config.host}:${listener.port}`, port: listener.port, embedded_database: db.embedded !== undefined });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log("info", "shutting down", { signal, in_flight: listener.inFlight() });
    try {
      await listener.close(SHUTDOWN_GRACE_MS);
      connect.stop();
      await db.close();
      log("info", "stopped");
      process.exit(0);
    } catch (err) {
      log("error", "shutdown failed", { error: String(err) });
      process.exit(1);
    }
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
  // If the embedded database dies under us, nothing can work: say so and exit non-zero.
  void db.embedded?.exited.then((code) => {
    if (!stopping) {
      log("error", "embedded database exited", { code });
      process.exit(1);
    }
  });
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError || err instanceof EmbeddedUnavailableError) log("error", err.message);
  else log("error", "start-up failed", { error: err instanceof Error ? err.stack : String(err) });
  process.exit(1);
});
