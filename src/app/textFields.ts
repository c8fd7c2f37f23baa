// The text rule (src/domain/text.ts) on every string field of every request, so each service and protocol gets it by existing.
import type { DescMessage, DescService } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { checkText } from "../domain/text.js";
import { guardUnaryMethods } from "../features/accounts/context.js";

/** Fields whose text has lines: a bio, a description, notes, a cancel reason, an address, a reminder's body; answers and question details (inside Struct/Value). */
const MULTILINE: ReadonlySet<string> = new Set(["bio", "description", "internal_notes", "reason", "details", "body"]);
/**
 * Not text a person typed: a picture sent as a form field is refused by its own rule (docs/spec/scheduling-api.md's
 * message), and a file name is only kept for its extension.
 */
const SKIPPED: ReadonlySet<string> = new Set(["profile_picture_text", "brand_logo_text", "filename"]);
/**
 * Fields whose own rule refuses every character this one would, with the answer their spec names, which this rule's
 * would hide: the urls a person is given (a user's, a team's, an event's; src/domain/user.ts urlFormatProblem), where
 * a format character such as a bidirectional override is "url contains characters that are not allowed"
 * (extensions.md "Urls people can tell apart"); and a change feed's `after`, a token the service made, where anything
 * else is unknown: 410 `changes are no longer kept` (callers.md), as the stream answers it. Candidates of the url
 * availability checks are not set anywhere and keep this rule.
 */
const OWN_RULE: ReadonlySet<string> = new Set([
  ...["AccountInput", "EventInput", "TeamInput", "UserUpdate"].map((m) => `scheduling.v1.${m}.url`),
  "scheduling.v1.ListBookingChangesRequest.after",
]);

/** Every string anywhere inside a google.protobuf Struct/Value/ListValue (as protobuf-es holds them), checked under the field's name. */
function checkAllStrings(value: unknown, field: string): void {
  if (typeof value === "string") checkText(field, value, true);
  else if (Array.isArray(value)) for (const v of value) checkAllStrings(v, field);
  else if (value !== null && typeof value === "object" && !(value instanceof Uint8Array)) {
    for (const [k, v] of Object.entries(value)) if (k !== "$typeName" && k !== "case") checkAllStrings(v, field);
  }
}

function checkValue(desc: DescMessage | undefined, value: unknown, name: string, multiline: boolean): void {
  if (typeof value === "string") checkText(name, value, multiline);
  else if (desc !== undefined && value !== null && typeof value === "object") {
    if (desc.typeName.startsWith("google.protobuf.")) checkAllStrings(value, name);
    else checkMessage(desc, value as Record<string, unknown>, name);
  }
}

/** Walks a request by its descriptor; the first broken string answers 422 naming it ("booking.attendee_name", "bookings[3].attendee_email"). */
function checkMessage(desc: DescMessage, message: Record<string, unknown>, path = ""): void {
  for (const field of desc.fields) {
    if (SKIPPED.has(field.name) || OWN_RULE.has(`${field.parent.typeName}.${field.name}`)) continue;
    let value: unknown;
    if (field.oneof) {
      const chosen = message[field.oneof.localName] as { case?: string; value?: unknown } | undefined;
      if (chosen?.case !== field.localName) continue;
      value = chosen.value;
    } else value = message[field.localName];
    if (value === undefined || value === null) continue;
    const name = path === "" ? field.name : `${path}.${field.name}`;
    const multiline = MULTILINE.has(field.name);
    const desc =
      field.fieldKind === "message" || (field.fieldKind === "list" && field.listKind === "message") || (field.fieldKind === "map" && field.mapKind === "message")
        ? field.message
        : undefined;
    if (field.fieldKind === "list" && Array.isArray(value)) value.forEach((v, i) => checkValue(desc, v, `${name}[${i}]`, multiline));
    else if (field.fieldKind === "map") for (const [k, v] of Object.entries(value)) checkValue(desc, v, `${name}.${k}`, multiline);
    else checkValue(desc, value, name, multiline);
  }
}

/** Puts the text rule in front of every unary method of a service (guardUnaryMethods), so a new field is covered by being declared. */
export function withTextRules(service: DescService, impl: ServiceImpl<DescService>): ServiceImpl<DescService> {
  return guardUnaryMethods(service, impl, (method, req) => checkMessage(method.input, req as Record<string, unknown>));
}
