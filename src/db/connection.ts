// Connects Mongoose to MONGODB_URI or to the embedded server, and builds every collection's indexes.
import mongoose from "mongoose";
import { startEmbedded, type EmbeddedServer } from "./embedded.js";
import { allModels } from "./models/index.js";

export interface Database {
  uri: string;
  embedded: EmbeddedServer | undefined;
  close(): Promise<void>;
}

// The embedded server has no `create` command; collections appear on first insert or createIndexes.
mongoose.set("autoCreate", false);
mongoose.set("autoIndex", false);
// Second guard against operator injection: `$`-keys in a filter are neutralised unless the code wraps the
// operator object in mongoose.trusted({ $gte: ... }), which it does only for operators it wrote itself.
mongoose.set("sanitizeFilter", true);
mongoose.set("strictQuery", true);

export async function connectDatabase(mongodbUri: string | undefined, log: (msg: string) => void): Promise<Database> {
  let embedded: EmbeddedServer | undefined;
  let uri = mongodbUri;
  if (!uri) {
    embedded = await startEmbedded("scheduling");
    uri = embedded.uri;
    log(`MONGODB_URI is not set: using the embedded in-memory database at ${uri}; all data is lost when the service stops`);
  }
  await mongoose.connect(uri, {
    serverSelectionTimeoutMS: 5000,
    maxPoolSize: 20,
    // The embedded server does not speak the streaming (exhaust) heartbeat: with it the driver marks the
    // server down two seconds after connecting. Polling heartbeats work on both.
    ...(embedded ? { serverMonitoringMode: "poll" as const } : {}),
  });
  await Promise.all(allModels.map((m) => m.createIndexes()));
  // The first command on a new pool connection is slow on the embedded server; pay it before serving.
  await mongoose.connection.db?.command({ ping: 1 });
  return {
    uri,
    embedded,
    async close() {
      await mongoose.disconnect();
      if (embedded) await embedded.stop();
    },
  };
}
