// AdminService: account creation (and the booking import, done by bookings) for internal services, authorised by X-ADMIN-TOKEN.
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { AdminService, type ImportBookingsRequest } from "../../../gen/scheduling/v1/admin_pb.js";
import { isDuplicateKey } from "../../db/errors.js";
import { UserModel, type UserDoc } from "../../db/models/user.js";
import { apiKeyDigest, encryptApiKey, generateApiKey, sameSecret } from "../../domain/apiKey.js";
import { DEFAULT_AVAILABILITY, toStoredAvailability } from "../../domain/availability.js";
import { forbidden, invalid, requireFields, unauthenticated } from "../../domain/errors.js";
import { checkFullName, checkTimezone, checkUserUrl, EMAIL_MAX, isEmail, normaliseUrl, urlFromName, userUrlKey, USER_DEFAULTS } from "../../domain/user.js";
import type { ServiceDeps } from "./context.js";
import { presentUser } from "./present.js";

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
      const input = req.account ?? { email: undefined, fullName: undefined, url: undefined, timezone: undefined };
      requireFields("account", { email: input.email, full_name: input.fullName });
      const email = (input.email ?? "").trim().toLowerCase();
      if (email.length > EMAIL_MAX || !isEmail(email)) throw invalid("email is invalid");
      const fullName = checkFullName(input.fullName ?? "");
      const timezone = input.timezone ?? USER_DEFAULTS.timezone;
      checkTimezone("timezone", timezone);
      const chosenUrl = input.url === undefined ? undefined : normaliseUrl(input.url);
      if (chosenUrl !== undefined) checkUserUrl(chosenUrl);
      if (await UserModel.exists({ email })) throw invalid("email has already been taken");

      const base = chosenUrl ?? urlFromName(fullName);
      for (let attempt = 0; attempt < URL_ATTEMPTS; attempt++) {
        // Derived urls get a numeric suffix until one is free; a url the caller chose is tried once.
        const url = attempt === 0 ? base : `${base.slice(0, 80 - String(attempt + 1).length - 1)}-${attempt + 1}`;
        const apiKey = generateApiKey();
        try {
          const created = await UserModel.create({
            email,
            full_name: fullName,
            url,
            url_key: userUrlKey(url),
            timezone,
            time_format: USER_DEFAULTS.time_format,
            date_format: USER_DEFAULTS.date_format,
            locale: USER_DEFAULTS.locale,
            currency: USER_DEFAULTS.currency,
            calendar_view: USER_DEFAULTS.calendar_view,
            start_day_of_week: USER_DEFAULTS.start_day_of_week,
            events_layout: USER_DEFAULTS.events_layout,
            api_key_digest: apiKeyDigest(apiKey),
            api_key_encrypted: encryptApiKey(apiKey, deps.apiKeyEncryptionKey),
            availability: toStoredAvailability(DEFAULT_AVAILABILITY),
            created_at: new Date(),
          });
          return { user: presentUser(created.toObject() as UserDoc, deps) };
        } catch (err) {
          if (isDuplicateKey(err, "email")) throw invalid("email has already been taken");
          if (isDuplicateKey(err, "url_key")) {
            if (input.url !== undefined) throw invalid("url has already been taken");
            continue;
          }
          throw err;
        }
      }
      throw invalid("url could not be derived from full_name; send a url");
    },

    async importBookings(req, ctx) {
      checkAdmin(ctx, deps);
      return importBookings(req);
    },
  };
}
