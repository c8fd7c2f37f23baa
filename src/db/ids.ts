// Ids from requests and payloads as ObjectIds: the one parser, so every path agrees on what is an id.
import mongoose from "mongoose";

/** An id from a request as an ObjectId, or null when it cannot be one (so it matches nothing, never a 500). */
export function objectIdOf(id: string | undefined | null): mongoose.Types.ObjectId | null {
  return typeof id === "string" && /^[0-9a-f]{24}$/i.test(id) ? new mongoose.Types.ObjectId(id) : null;
}
