// The second guard against operator injection: with the service's Mongoose settings an untrusted `$`-object in a filter is neutralised.
import mongoose from "mongoose";
import { describe, expect, it } from "vitest";
import "../../src/db/connection.js";
import { UserModel } from "../../src/db/models/user.js";

/** The filter as Mongoose would send it (sanitising runs when the query is cast, just before it executes). */
function sentFilter(query: mongoose.Query<unknown, unknown>): Record<string, unknown> {
  (query as unknown as { _castConditions(): void })._castConditions();
  return query.getFilter();
}

describe("sanitizeFilter", () => {
  it("is switched on by the connection module", () => {
    expect(mongoose.get("sanitizeFilter")).toBe(true);
  });

  it("wraps an operator object that came from input in $eq, so it matches only itself", () => {
    const input: unknown = { $ne: "" };
    const filter = sentFilter(UserModel.findOne({ url_key: input as string }));
    expect(filter).toEqual({ url_key: { $eq: { $ne: "" } } });
  });

  it("leaves operators the code wrote itself (mongoose.trusted) alone", () => {
    const filter = sentFilter(UserModel.findOne({ created_at: mongoose.trusted({ $gte: new Date(0) }) }));
    expect(Object.keys(filter.created_at as object)).toEqual(["$gte"]);
  });
});
