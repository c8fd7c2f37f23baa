// UserService: the account of the API key, its settings, url, picture and brand logo, key and availability.
import { randomBytes } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { fileTypeFromBuffer } from "file-type";
import { GetUserResponseSchema, UserService, type GetUserResponse } from "../../../gen/scheduling/v1/user_pb.js";
import { deepFreeze, onceFor } from "../../domain/frozen.js";
import { PictureModel } from "../../db/models/picture.js";
import type { UserDoc } from "../../db/models/user.js";
import { apiKeyDigest, encryptApiKey, generateApiKey } from "../../domain/apiKey.js";
import { ApiError, invalid, missingParams, REASONS, refusal, requireObject, unauthenticated } from "../../domain/errors.js";
import { avatarName } from "../../domain/format.js";
import { checkUserPatch, PICTURE_MAX_BYTES } from "../../domain/user.js";
import { userUrlKeys } from "../../domain/urlKey.js";
import type { Access, ServiceDeps } from "./context.js";
import { presentSettings, presentUser } from "./present.js";
import { availabilityMethods } from "./availability.js";
import { preparePicture, UNSUPPORTED_PICTURE, type PictureUse } from "./picture.js";
import { settingsInput } from "./settings.js";
import { isUserUrlTaken, replaceApiKey, swapAccountPicture, updateAccount } from "./writes.js";
import { heldByAnother } from "./keys.js";

const PICTURE_TYPES: ReadonlySet<string> = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

/** Where the account points at each kind of picture it has: the profile picture and the brand logo. */
const POINTER = { avatar: "picture_id", logo: "logo_id" } as const satisfies Record<PictureUse, keyof UserDoc>;

/** An upload as its request carries it: the file's bytes, or the text a form sent in the file's place. */
interface Upload {
  bytes: Uint8Array | undefined;
  text: string | undefined;
}

/**
 * Checks and stores an uploaded picture (`name` is its field: profile_picture, brand_logo) and points the account at
 * it; answers its public id. The declared type is never trusted: the bytes say what the file is. It is re-encoded
 * before anything is kept, so what is stored and served carries none of the file's metadata.
 */
async function storeUpload(access: Access, user: UserDoc, name: string, use: PictureUse, upload: Upload): Promise<string> {
  if (upload.text !== undefined) throw invalid(`${name} must be an uploaded image file`);
  const bytes = upload.bytes;
  if (bytes === undefined) throw missingParams({ user: [name] });
  if (bytes.length > PICTURE_MAX_BYTES) throw invalid("image must be 5MB or smaller", name);
  const sniffed = bytes.length > 0 ? await fileTypeFromBuffer(bytes) : undefined;
  if (!sniffed || !PICTURE_TYPES.has(sniffed.mime)) throw invalid(UNSUPPORTED_PICTURE, name);
  const prepared = await preparePicture(bytes, sniffed.mime, use);
  const publicId = randomBytes(16).toString("hex");
  await PictureModel.create({ public_id: publicId, user_id: user._id, ...prepared, prepared: true, created_at: access.clock.now() });
  await replacePicture(access, user._id, use, publicId);
  return publicId;
}

/**
 * Points the account's `use` picture at `publicId` (or at none) and deletes only the picture this swap replaced.
 * The swap is atomic, so with uploads and removals racing each replaced picture is deleted once, and never the
 * current one. The old picture goes after the account stops pointing at it, so a reader never sees a dangling
 * address.
 */
async function replacePicture(access: Access, userId: UserDoc["_id"], use: PictureUse, publicId: string | null): Promise<void> {
  let replaced: string | null | undefined;
  try {
    replaced = await swapAccountPicture(access, userId, POINTER[use], publicId);
  } catch (err) {
    // Refused (out of tries against other swaps): the account never pointed at the new picture, which goes.
    if (err instanceof ApiError && publicId !== null) await PictureModel.deleteOne({ public_id: publicId });
    throw err;
  }
  if (replaced && replaced !== publicId) await PictureModel.deleteOne({ public_id: replaced });
}

export function createUserService(deps: ServiceDeps): ServiceImpl<typeof UserService> {
  /**
   * GetUser's reply by account snapshot. A replica answers from one snapshot of an account for the whole lease
   * (ACCOUNT_CACHE_MS, src/features/accounts/context.ts), and nothing changes a snapshot, so the reply made from it is made
   * once and frozen; the transports then encode it once too (src/domain/frozen.ts). A write makes a new snapshot, and
   * the old one and its reply go with the lease. Without the cache every call has a snapshot of its own.
   */
  const userReplies = new WeakMap<UserDoc, GetUserResponse>();
  const userReply = (user: UserDoc) => deepFreeze(create(GetUserResponseSchema, { user: presentUser(user, deps) }));

  return {
    // Without a promise when the account is cached (`authenticateNow`): the most called method does nothing else.
    getUser(_req, ctx) {
      const user = deps.access.authenticateNow(ctx);
      return user instanceof Promise ? user.then((u) => onceFor(userReplies, u, userReply)) : onceFor(userReplies, user, userReply);
    },

    async getUserSettings(_req, ctx) {
      const user = await deps.access.authenticate(ctx);
      return { settings: presentSettings(user, deps) };
    },

    async updateUser(req, ctx) {
      const user = await deps.access.authenticate(ctx);
      const u = req.user;
      requireObject("user", u);
      const patch = checkUserPatch(settingsInput(u));
      if (Object.keys(patch).length === 0) return { user: presentUser(user, deps) };
      let updated: UserDoc | null;
      try {
        updated = await updateAccount(deps.access, user._id, patch);
      } catch (err) {
        if (isUserUrlTaken(err)) throw invalid("url has already been taken");
        throw err;
      }
      // The caller was authenticated a moment ago; a vanished account is as good as a bad key.
      if (!updated) throw refusal(REASONS.changedMeanwhile, "account no longer exists");
      return { user: presentUser(updated, deps) };
    },

    async checkUserUrlAvailability(req, ctx) {
      const user = await deps.access.authenticate(ctx);
      const url = req.user?.url;
      if (url === undefined || url.trim() === "") throw missingParams({ user: ["url"] });
      const { url_key, url_shape, url_looks } = userUrlKeys(url);
      // Another account whose url reads as this one.
      return { available: !(await heldByAnother(user._id, [["url", url_key], ["shape", url_shape], ...url_looks.map((look) => ["look", look] as const)])) };
    },

    async uploadProfilePicture(req, ctx) {
      const user = await deps.access.authenticate(ctx);
      await storeUpload(deps.access, user, "profile_picture", "avatar", { bytes: req.user?.profilePicture, text: req.user?.profilePictureText });
      // The user object does not show the picture, so the account as authenticated is the answer.
      return { user: presentUser(user, deps) };
    },

    async removeProfilePicture(_req, ctx) {
      const user = await deps.access.authenticate(ctx);
      await replacePicture(deps.access, user._id, "avatar", null);
      return { id: user._id.toHexString(), avatarName: avatarName(user.full_name) };
    },

    async uploadBrandLogo(req, ctx) {
      const user = await deps.access.authenticate(ctx);
      const logoId = await storeUpload(deps.access, user, "brand_logo", "logo", { bytes: req.user?.brandLogo, text: req.user?.brandLogoText });
      // The user object shows the logo: the answer is the account as it now is.
      return { user: presentUser({ ...user, logo_id: logoId }, deps) };
    },

    async removeBrandLogo(_req, ctx) {
      const user = await deps.access.authenticate(ctx);
      await replacePicture(deps.access, user._id, "logo", null);
      return { user: presentUser({ ...user, logo_id: null }, deps) };
    },

    async regenerateApiKey(_req, ctx) {
      const user = await deps.access.authenticate(ctx);
      const apiKey = generateApiKey();
      const replaced = await replaceApiKey(deps.access, user, { api_key_digest: apiKeyDigest(apiKey), api_key_encrypted: encryptApiKey(apiKey, deps.apiKeyEncryptionKey) });
      // Another request regenerated first: the key this caller used is no longer valid.
      if (!replaced) throw unauthenticated("Invalid api_key");
      return { apiKey };
    },

    ...availabilityMethods(deps.access),
  };
}
