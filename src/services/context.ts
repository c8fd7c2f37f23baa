// What every service needs besides the database: settings resolved at start, and the caller's account.
import type { HandlerContext } from "@connectrpc/connect";
import { apiKeyDigest } from "../domain/apiKey.js";
import { unauthenticated } from "../domain/errors.js";
import { UserModel, type UserDoc } from "../db/models/user.js";

export interface ServiceDeps {
  /** Public website address without a trailing slash. */
  appUrl(): string;
  /** AES-256 key for the stored API key copies. */
  apiKeyEncryptionKey: Buffer;
  adminToken: string | undefined;
}

/** Resolves the account of the `x-api-key` header (case-insensitive, as Headers are). */
export async function authenticate(ctx: HandlerContext): Promise<UserDoc> {
  const key = ctx.requestHeader.get("x-api-key");
  if (key === null || key === "") throw unauthenticated("api_key is missing");
  const user = await UserModel.findOne({ api_key_digest: apiKeyDigest(key) }).lean<UserDoc>();
  if (!user) throw unauthenticated("Invalid api_key");
  return user;
}
