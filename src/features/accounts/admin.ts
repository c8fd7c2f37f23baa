// AdminService: account creation (and the booking import, done by bookings) for internal services, authorised by X-ADMIN-TOKEN.
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { AccountInputSchema, AdminService, type ImportBookingsRequest } from "../../../gen/scheduling/v1/admin_pb.js";
import { apiKeyDigest, encryptApiKey, generateApiKey, sameSecret } from "../../domain/apiKey.js";
import { DEFAULT_AVAILABILITY, toStoredAvailability } from "../../domain/availability.js";
import { forbidden, invalid, requireFields, unauthenticated } from "../../domain/errors.js";
import { checkFullName, checkUserPatch, checkUserUrl, EMAIL_MAX, isEmail, normaliseUrl, urlFromName, USER_DEFAULTS } from "../../domain/user.js";
import { userUrlKeys } from "../../domain/urlKey.js";
import { regionalSettings, serviceZoneOf } from "../../domain/zoneNames.js";
import type { ServiceDeps } from "./context.js";
import { presentUser } from "./present.js";
import { settingsInput } from "./settings.js";
import { AccountKeyTaken, insertAccount, isUserUrlTaken } from "./writes.js";

export function checkAdmin(ctx: HandlerContext, deps: ServiceDeps): void {
  if (!deps.adminToken) throw forbidden("admin api is disabled");
  if (!sameSecret(ctx.requestHeader.get("x-admin-token") ?? "", deps.adminToken)) throw unauthenticated("admin token is missing or invalid");
}

const URL_ATTEMPTS = 50;

/** The booking import, which the bookings feature does (src/app wires it in: bookings build on accounts). */
export type ImportBookings = (req: ImportBookingsRequest) => Promise<{ imported: number; ids: string[] }>;

export function createAdminService(deps: ServiceDeps, importBookings: ImportBookings): ServiceImpl<typeof AdminService> {
  return {
    async createAccount(req, ctx) {
      checkAdmin(ctx, deps);
      const input = req.account ?? create(AccountInputSchema);
      requireFields("account", { email: input.email, full_name: input.fullName });
      const email = (input.email ?? "").trim().toLowerCase();
      if (email.length > EMAIL_MAX || !isEmail(email)) throw invalid("email is invalid");
      const fullName = checkFullName(input.fullName ?? "");
      // Every setting PATCH /user takes, by its rules; the zone in either vocabulary, stored as the service's name.
      const timezone = serviceZoneOf("timezone", input.timezone ?? USER_DEFAULTS.timezone);
      const settings = checkUserPatch({ ...settingsInput(input), full_name: undefined, url: undefined, timezone });
      const chosenUrl = input.url === undefined ? undefined : normaliseUrl(input.url);
      if (chosenUrl !== undefined) checkUserUrl(chosenUrl);

      const base = chosenUrl ?? urlFromName(fullName);
      for (let attempt = 0; attempt < URL_ATTEMPTS; attempt++) {
        // Derived urls get a numeric suffix until one is free; a url the caller chose is tried once.
        const url = attempt === 0 ? base : `${base.slice(0, 80 - String(attempt + 1).length - 1)}-${attempt + 1}`;
        const apiKey = generateApiKey();
        try {
          const created = await insertAccount({
            email,
            full_name: fullName,
            url,
            ...userUrlKeys(url),
            ...USER_DEFAULTS,
            // What the zone's region writes, then what the caller gave: none of it dropped.
            ...regionalSettings(timezone),
            ...settings,
            api_key_digest: apiKeyDigest(apiKey),
            api_key_encrypted: encryptApiKey(apiKey, deps.apiKeyEncryptionKey),
            availability: toStoredAvailability(DEFAULT_AVAILABILITY),
            created_at: deps.clock.now(),
          });
          return { user: presentUser(created, deps) };
        } catch (err) {
          if (err instanceof AccountKeyTaken && err.kind === "email") throw invalid("email has already been taken");
          if (isUserUrlTaken(err)) {
            if (input.url !== undefined) throw invalid("url has already been taken");
            continue;
          }
          throw err;
        }
      }
      throw invalid("url could not be derived from full_name; send a url", "url");
    },

    async importBookings(req, ctx) {
      checkAdmin(ctx, deps);
      return importBookings(req);
    },
  };
}
