// Turns stored documents into the proto messages the API returns; display fields are derived here, never stored.
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { UserSchema, UserSettingsSchema } from "../../../gen/scheduling/v1/user_pb.js";
import type { UserDoc } from "../../db/models/user.js";
import { decryptApiKey } from "../../domain/apiKey.js";
import { avatarName } from "../../domain/format.js";
import { ianaForServiceZone } from "../../domain/timezones.js";
import type { ServiceDeps } from "./context.js";
import type { LogoWidth, PictureWidth } from "./picture.js";

type UserFields = Omit<Extract<MessageInitShape<typeof UserSchema>, { $typeName?: unknown }>, "$typeName">;

/** Decrypted keys by stored copy: a stored copy always decrypts to the same key, so the entries never go stale. */
const decrypted = new Map<string, string>();
const DECRYPTED_MAX = 10_000;

/** The API key shown by GET /user; AES-GCM runs once per stored copy instead of on every request. */
function apiKeyOf(stored: string, encKey: Buffer): string {
  let key = decrypted.get(stored);
  if (key === undefined) {
    key = decryptApiKey(stored, encKey);
    // Oldest first out: a Map iterates in insertion order.
    if (decrypted.size >= DECRYPTED_MAX) decrypted.delete(decrypted.keys().next().value as string);
    decrypted.set(stored, key);
  }
  return key;
}

export function presentUser(u: UserDoc, deps: ServiceDeps): UserFields {
  return {
    id: u._id.toHexString(),
    email: u.email,
    fullName: u.full_name,
    url: u.url,
    avatarName: avatarName(u.full_name),
    bio: u.bio ?? undefined,
    timezone: u.timezone,
    dateTimezone: ianaForServiceZone(u.timezone),
    timeFormat: u.time_format,
    dateFormat: u.date_format,
    locale: u.locale,
    currency: u.currency,
    countryIsoCode: u.country_iso_code ?? undefined,
    calendarView: u.calendar_view,
    showCustomPolicy: false,
    createdAt: u.created_at.toISOString(),
    apiKey: apiKeyOf(u.api_key_encrypted, deps.apiKeyEncryptionKey),
    brandColor: u.brand_color ?? undefined,
    brandLogoUrl: u.logo_id ? pictureUrl(deps.appUrl(), u.logo_id) : undefined,
  };
}

export function pictureUrl(appUrl: string, pictureId: string): string {
  return `${appUrl}/pictures/${pictureId}`;
}

/** A resized copy of a picture, beside it (src/features/accounts/picture.ts): `<picture url>/128.webp`. */
export function pictureCopyUrl(url: string, width: PictureWidth | LogoWidth): string {
  return `${url}/${width}.webp`;
}

export function presentSettings(u: UserDoc, deps: ServiceDeps): MessageInitShape<typeof UserSettingsSchema> {
  const appUrl = deps.appUrl();
  return {
    ...presentUser(u, deps),
    startDayOfWeek: u.start_day_of_week,
    designation: u.designation ?? "",
    verified: true,
    needToSetPassword: false,
    showMessageButtonOnProfile: u.show_message_button_on_profile ?? false,
    showMessageButtonOnEvents: u.show_message_button_on_events ?? false,
    // The pages show the account's branding (its colour, its logo) when it has any.
    enableBranding: Boolean(u.brand_color || u.logo_id),
    profilePictureUrl: u.picture_id ? pictureUrl(appUrl, u.picture_id) : "",
    profileEmbedUrl: `${appUrl}/${encodeURIComponent(u.url)}?embed=true`,
    activePolicy: { id: `policy-${u._id.toHexString()}`, content: "" },
    eventsLayout: u.events_layout,
  };
}
