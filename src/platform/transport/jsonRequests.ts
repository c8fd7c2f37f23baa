// RPC request messages sent as JSON (Connect; gRPC-Web and gRPC with the JSON codec) read as the protobuf JSON mapping reads them by default: a name the message does not have is refused, not dropped, and a body refused names its fields (callers.md "Errors programs can read": UNKNOWN_FIELD, INVALID_VALUE).
import { fromJsonString, type DescField, type DescMessage, type JsonValue, type Message } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ApiError, invalid, REASONS, unknownFieldMessage } from "../../domain/errors.js";
import { withErrorDetails } from "./errorDetails.js";

/*
 * Why refuse: Connect-ES drops unknown JSON names unless told otherwise, so `{"booking":{"internalNote":"x"}}` (a
 * typo of `internal_note`) answered 200 and changed nothing, and the caller never learnt why. The JSON mapping's
 * default is to refuse them; ignoring is an option a reader may choose. Binary protobuf keeps ignoring unknown
 * fields (fastUnary.ts BINARY_READ): that is how proto clients and servers of different versions talk.
 */
export const JSON_READ = { ignoreUnknownFields: false } as const;

type JsonObject = { [k: string]: JsonValue };

function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A message's fields by every name protobuf's JSON reader takes for them: the proto name and the lowerCamelCase JSON name. */
const fieldsByName = new WeakMap<DescMessage, ReadonlyMap<string, DescField>>();
function fieldNamed(desc: DescMessage, key: string): DescField | undefined {
  let names = fieldsByName.get(desc);
  if (names === undefined) {
    const map = new Map<string, DescField>();
    for (const f of desc.fields) map.set(f.name, f).set(f.jsonName, f);
    fieldsByName.set(desc, (names = map));
  }
  return names.get(key);
}

/**
 * The message whose fields a field's JSON holds as an object (itself, a list's items, a map's values), or undefined
 * for a value: a scalar, an enum, or a well-known type, whose JSON is a form of its own (a Timestamp's string, a Struct).
 */
function objectMessage(field: DescField): DescMessage | undefined {
  const desc = field.fieldKind === "message" ? field.message : field.fieldKind === "list" || field.fieldKind === "map" ? field.message : undefined;
  return desc === undefined || desc.typeName.startsWith("google.protobuf.") ? undefined : desc;
}

/** protobuf's own reader stops there too; a body nested deeper is refused by it before anything here runs twice. */
const MAX_DEPTH = 100;

/** The objects a field's JSON holds, each with its path (`booking.`, `answers[0].`, `labels.a.`); none for a value. */
function objectsOf(field: DescField, value: JsonValue, prefix: string): Array<[string, JsonValue]> {
  const path = `${prefix}${field.name}`;
  if (field.fieldKind === "list") return Array.isArray(value) ? value.map((item, i) => [`${path}[${i}].`, item]) : [];
  if (field.fieldKind === "map") return isObject(value) ? Object.entries(value).map(([k, v]) => [`${path}.${k}.`, v]) : [];
  return [[`${path}.`, value]];
}

interface UnknownName {
  /** Its path: the fields above it by their proto names, then the name as sent (`booking.internalNote`). */
  field: string;
  /** What the object it is in takes, as paths: each field's proto and JSON name (for the "did you mean"). */
  allowed: string[];
}

function collectUnknown(desc: DescMessage, json: JsonValue, prefix: string, depth: number, out: UnknownName[]): void {
  if (!isObject(json) || depth > MAX_DEPTH) return;
  for (const key of Object.keys(json)) {
    const field = fieldNamed(desc, key);
    if (field === undefined) {
      out.push({ field: prefix + key, allowed: desc.fields.flatMap((f) => (f.jsonName === f.name ? [prefix + f.name] : [prefix + f.name, prefix + f.jsonName])) });
      continue;
    }
    const inner = objectMessage(field);
    if (inner !== undefined) for (const [path, item] of objectsOf(field, json[key], prefix)) collectUnknown(inner, item, path, depth + 1, out);
  }
}

/** Whether protobuf reads `value` as the field `key` of `desc`, alone. */
function decodes(desc: DescMessage, key: string, value: JsonValue): boolean {
  try {
    fromJsonString(desc, JSON.stringify({ [key]: value }), JSON_READ);
    return true;
  } catch {
    return false;
  }
}

/** The path of the first value protobuf does not read (`limit`, `event.name`, `answers[1].question_id`), or undefined. */
function firstInvalid(desc: DescMessage, json: JsonObject, prefix: string, depth: number): string | undefined {
  if (depth > MAX_DEPTH) return undefined;
  for (const key of Object.keys(json)) {
    const field = fieldNamed(desc, key);
    const value = json[key];
    if (field === undefined || decodes(desc, key, value)) continue;
    const inner = objectMessage(field);
    if (inner !== undefined && field.fieldKind !== "map") {
      // Below a message, the value that fails; an item that is no object is itself the value.
      for (const [path, item] of objectsOf(field, value, prefix)) {
        if (!isObject(item)) return path.slice(0, -1);
        const below = firstInvalid(inner, item, path, depth + 1);
        if (below !== undefined) return below;
      }
    } else if (field.fieldKind === "list" && Array.isArray(value)) {
      const at = value.findIndex((item) => !decodes(desc, key, [item]));
      if (at >= 0) return `${prefix}${field.name}[${at}]`;
    }
    return `${prefix}${field.name}`;
  }
  return undefined;
}

/**
 * Why the JSON `text` is not a `desc`, named as callers.md asks: every name the message does not take
 * (UNKNOWN_FIELD, one field violation each, the message `unknown field <path>` with REST's "did you mean"), else the
 * first value it cannot read (INVALID_VALUE, `<path> is not valid` as REST words it). Undefined when the text is no
 * JSON object, or the fault is of no one field (a oneof set twice): protobuf's own message says it then.
 */
function jsonRequestError(desc: DescMessage, text: string): ApiError | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(json)) return undefined;
  const found: UnknownName[] = [];
  collectUnknown(desc, json, "", 0, found);
  const unknown = found.map((u) => ({ field: restNamed(desc, u.field), allowed: u.allowed.map((a) => restNamed(desc, a)) }));
  if (unknown.length > 0) {
    const messages = unknown.map((u) => unknownFieldMessage(u.field, u.allowed));
    return new ApiError(Code.InvalidArgument, messages[0], {
      reason: REASONS.unknownField,
      fieldViolations: unknown.map((u, i) => ({ field: u.field, description: messages[i] })),
    });
  }
  const invalidAt = firstInvalid(desc, json, "", 0);
  if (invalidAt === undefined) return undefined;
  const field = restNamed(desc, invalidAt);
  return invalid(`${field} is not valid`, field);
}

/**
 * A path as the REST message names it (callers.md: a field violation's `field` as the REST message names it): inside
 * the request's resource object, whose REST body the object is (`event.name` is `name is not valid`, `event.bogus` is
 * `unknown field bogus`, as POST /api/v1/events answers), else from the request's root (`limit`, `event_ids[1]`).
 */
function restNamed(desc: DescMessage, path: string): string {
  const dot = path.indexOf(".");
  if (dot < 0) return path;
  const field = fieldNamed(desc, path.slice(0, dot));
  return field?.fieldKind === "message" && !field.message.typeName.startsWith("google.protobuf.") ? path.slice(dot + 1) : path;
}

/** The request message read from JSON `text`; a text it is not is INVALID_ARGUMENT, naming its fields where it can. */
export function requestFromJsonText(desc: DescMessage, text: string): Message {
  try {
    return fromJsonString(desc, text, JSON_READ);
  } catch (err) {
    const named = jsonRequestError(desc, text);
    if (named) throw withErrorDetails(named);
    throw new ConnectError(err instanceof Error ? err.message : String(err), Code.InvalidArgument);
  }
}

/**
 * The JSON options of a method served by Connect's own handlers (calls with a deadline, compressed ones, streams,
 * gRPC-Web and gRPC with the JSON codec): Connect hands the request's text to `textDecoder` and reads it at once,
 * and there is no other place to see what it read. The text is read here first, so a refusal carries its fields as
 * on the fast path (Connect passes a ConnectError on as it is); a text that reads well is read once more by
 * Connect. Only requests off the fast path pay that (fastUnary.ts answers plain Connect JSON calls).
 */
export function jsonOptionsOf(desc: DescMessage) {
  const utf8 = new TextDecoder();
  return {
    ...JSON_READ,
    textDecoder: {
      decode(bytes?: Uint8Array): string {
        const text = utf8.decode(bytes);
        requestFromJsonText(desc, text);
        return text;
      },
    },
  };
}
