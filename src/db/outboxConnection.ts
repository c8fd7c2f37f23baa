// The outbox's own database connection (its own pool): request bursts cannot starve the outbox of connections, nor the outbox the requests. connection.ts opens it beside the main one.
import mongoose from "mongoose";

/**
 * The models bound here (effects, effect attempts, the relay's view of bookings) use this connection's pool. Opened
 * by connectDatabase with the main connection's deadlines, except a longer wait for a free connection: no request
 * waits on it, and an outbox write that waits is better than one that fails and is retried.
 */
export const outboxConnection = mongoose.createConnection();
