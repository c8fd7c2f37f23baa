// Replicas of the service on one test database of their own, each with a gRPC client, and the database seen directly: for files that race requests across replicas.
import mongoose from "mongoose";
import { afterAll, beforeAll } from "vitest";
import { grpcClientAt } from "./grpcAt.js";
import { startDatabase, type TestDatabase } from "./jongodb.js";
import { startServer, type RunningServer } from "./server.js";

export interface Replicas {
  servers: RunningServer[];
  /** One per server, in the same order. */
  grpc: ReturnType<typeof grpcClientAt>[];
  /** The database itself, not through any replica. */
  direct: mongoose.Connection;
}

/** Starts `count` replicas with `env` before the file's tests and stops them after; filled in by beforeAll. */
export function useReplicas(count: number, env: Record<string, string>): Replicas {
  const replicas = { servers: [], grpc: [] } as unknown as Replicas;
  let db: TestDatabase | undefined;
  beforeAll(async () => {
    db = await startDatabase();
    const uri = db.uri;
    replicas.servers = await Promise.all(Array.from({ length: count }, () => startServer({ MONGODB_URI: uri, ...env })));
    replicas.grpc = replicas.servers.map((s) => grpcClientAt(s.baseUrl));
    replicas.direct = await mongoose.createConnection(uri).asPromise();
  });
  afterAll(async () => {
    for (const c of replicas.grpc) c.close();
    await replicas.direct?.close();
    await Promise.all(replicas.servers.map((s) => s.stop()));
    await db?.kill();
  });
  return replicas;
}
