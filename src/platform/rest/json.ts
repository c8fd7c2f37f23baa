// Converts between REST JSON (snake_case, nulls for unset optional fields) and proto messages.
import { create, fromJson, isFieldSet, toJson, type DescField, type DescMessage, type JsonValue, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import { ValueSchema, type Value } from "@bufbuild/protobuf/wkt";
import { invalid, notAllowed } from "../../domain/errors.js";
import { deepFreeze, onceFor } from "../../domain/frozen.js";
import { ABSENT_WHEN_UNSET, ALLOWED_VALUES, REST_NAMES, restNameOf } from "./schemaFacts.js";

export type JsonObject = { [k: string]: JsonValue };

/**
 * Reads a REST request into the RPC's request message; a wrong JSON type is a 422 naming the field, and for a
 * field of an enumerated list (`"slot_duration": 30`) `data` lists the values, as for a value outside the list
 * (extensions.md "Allowed values": whatever the value's type).
 */
export function requestFromJson<D extends DescMessage>(schema: D, json: JsonValue): MessageShape<D> {
  try {
    return fromJson(schema, protoNamed(schema, json), { ignoreUnknownFields: true });
  } catch (err) {
    const text = err instanceof Error ? err.message : String(err);
    const messageType = /cannot decode message ([\w.]+) from JSON/.exec(text)?.[1];
    const qualified = /field ([\w.]+) from JSON/.exec(text)?.[1];
    const parent = qualified?.slice(0, qualified.lastIndexOf(".")) ?? "";
    const protoName = qualified?.split(".").pop();
    // Named as REST names it: `_destroy is not valid`.
    const field = (protoName && (REST_NAMES[parent]?.[protoName] ?? protoName)) || (messageType && fieldHoldingNonObject(schema, json, messageType));
    if (!field) throw invalid("request body is not valid");
    const list = protoName ? ALLOWED_VALUES[parent]?.[protoName] : undefined;
    if (list) throw notAllowed(field, list.values, `${field} is not valid`);
    throw invalid(`${field} is not valid`);
  }
}

/** Whether a message, or one it holds, has a field whose REST name is not its proto name: only those are walked. */
const holdsRestNames = new WeakMap<DescMessage, boolean>();
function hasRestNames(desc: DescMessage): boolean {
  let known = holdsRestNames.get(desc);
  if (known === undefined) {
    const seen = new Set<DescMessage>();
    const walk = (d: DescMessage): boolean => {
      if (seen.has(d)) return false;
      seen.add(d);
      return d.fields.some((f) => restNameOf(f) !== f.name || (holdsMessages(f) && walk(f.message)));
    };
    known = walk(desc);
    holdsRestNames.set(desc, known);
  }
  return known;
}

/** REST JSON with the proto's names, as protobuf's reader takes it: `_destroy` is `destroy`. */
export const protoNamed = (desc: DescMessage, json: JsonValue): JsonValue => renamed(desc, json, "toProto");

const holdsMessages = (f: DescField): f is DescField & { message: DescMessage } => f.fieldKind === "message" || (f.fieldKind === "list" && f.listKind === "message");

/**
 * The JSON with the REST names (schemaFacts.ts REST_NAMES) turned into proto names (a request) or back (an
 * answer); an object that holds none is returned as it is, and one that does is copied, never changed in place.
 */
function renamed(desc: DescMessage, json: JsonValue, to: "toProto" | "toRest"): JsonValue {
  if (typeof json !== "object" || json === null || Array.isArray(json) || !hasRestNames(desc)) return json;
  const out: JsonObject = { ...json };
  for (const field of desc.fields) {
    const rest = restNameOf(field);
    const [from, into] = to === "toProto" ? [rest, field.name] : [field.name, rest];
    if (from !== into && from in out) {
      out[into] = out[from];
      delete out[from];
    }
    if (!holdsMessages(field)) continue;
    const key = [field.name, field.jsonName, rest].find((k) => k in out);
    const value = key === undefined ? undefined : out[key];
    if (key === undefined || value === undefined) continue;
    out[key] = Array.isArray(value) ? value.map((item) => renamed(field.message, item, to)) : renamed(field.message, value, to);
  }
  return out;
}

/**
 * A message-typed field sent as a string, number or array fails naming only the message type ("cannot decode
 * message scheduling.v1.UserUpdate"); this finds the field that holds it, so the 422 can name it (`user`).
 */
function fieldHoldingNonObject(schema: DescMessage, json: JsonValue, typeName: string): string | undefined {
  if (typeof json !== "object" || json === null || Array.isArray(json)) return undefined;
  for (const field of schema.fields) {
    if (field.fieldKind !== "message" && !(field.fieldKind === "list" && field.listKind === "message")) continue;
    const value = json[field.name] ?? json[field.jsonName];
    if (value === undefined || value === null) continue;
    const items = field.fieldKind === "list" && Array.isArray(value) ? value : [value];
    for (const item of items) {
      const isObject = typeof item === "object" && item !== null && !Array.isArray(item);
      if (!isObject && field.message.typeName === typeName) return field.name;
      const inner = fieldHoldingNonObject(field.message, item, typeName);
      if (inner) return inner;
    }
  }
  return undefined;
}

function isWellKnown(desc: DescMessage): boolean {
  return desc.typeName.startsWith("google.protobuf.");
}

/** Fills `null` for optional fields that are unset, as REST clients expect (`bio: null`). */
function addNulls(desc: DescMessage, message: MessageShape<DescMessage>, json: JsonObject): void {
  for (const field of desc.fields) {
    const key = field.name;
    const set = isFieldSet(message, field);
    if (!set) {
      if (field.fieldKind === "scalar" || field.fieldKind === "enum" || field.fieldKind === "message") {
        if (field.presence !== 2 /* IMPLICIT */ && !(key in json) && !ABSENT_WHEN_UNSET[desc.typeName]?.includes(key)) json[key] = null;
      }
      continue;
    }
    if (field.fieldKind === "message" && !isWellKnown(field.message)) {
      const child = json[key];
      if (child && typeof child === "object" && !Array.isArray(child)) {
        addNulls(field.message, (message as unknown as Record<string, MessageShape<DescMessage>>)[field.localName], child);
      }
    } else if (field.fieldKind === "list" && field.listKind === "message" && !isWellKnown(field.message)) {
      const items = (message as unknown as Record<string, MessageShape<DescMessage>[]>)[field.localName];
      const arr = json[key];
      if (Array.isArray(arr)) items.forEach((item, i) => addNulls(field.message, item, arr[i] as JsonObject));
    }
  }
}

function toRestJson<D extends DescMessage>(schema: D, message: MessageShape<D>): JsonObject {
  const json = toJson(schema, message, { useProtoFieldName: true, alwaysEmitImplicit: true }) as JsonObject;
  addNulls(schema, message as MessageShape<DescMessage>, json);
  return renamed(schema, json, "toRest") as JsonObject;
}

/** The REST JSON of frozen replies (src/domain/frozen.ts): made once, and frozen as well, since it is handed out again. */
const frozenReplies = new WeakMap<MessageShape<DescMessage>, JsonObject>();

export function responseToJson<D extends DescMessage>(schema: D, init: MessageInitShape<D> | MessageShape<D>): JsonObject {
  const message = create(schema, init as MessageInitShape<D>);
  if (!Object.isFrozen(message)) return toRestJson(schema, message);
  return onceFor(frozenReplies, message as MessageShape<DescMessage>, () => deepFreeze(toRestJson(schema, message)));
}

/**
 * A request's google.protobuf.Value as plain data, as toJson gives it, but for a number JSON cannot hold: a body's
 * `1e400` parses to Infinity, which toJson refuses with an error of its own (a 500 before this). Kept as the number,
 * it meets the field's rule (a range, an integer, a finite answer) and is refused as any value out of range is.
 */
export function plainValue(v: Value): unknown {
  switch (v.kind.case) {
    case "numberValue":
      return v.kind.value;
    case "listValue":
      return v.kind.value.values.map(plainValue);
    case "structValue":
      return Object.fromEntries(Object.entries(v.kind.value.fields).map(([k, x]) => [k, plainValue(x)]));
    default:
      return toJson(ValueSchema, v);
  }
}
