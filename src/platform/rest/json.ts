// Converts between REST JSON (snake_case, nulls for unset optional fields) and proto messages.
import { create, fromJson, isFieldSet, toJson, type DescMessage, type JsonValue, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import { invalid, notAllowed } from "../../domain/errors.js";
import { deepFreeze, onceFor } from "../../domain/frozen.js";
import { ALLOWED_VALUES } from "./schemaFacts.js";

export type JsonObject = { [k: string]: JsonValue };

/**
 * Reads a REST request into the RPC's request message; a wrong JSON type is a 422 naming the field, and for a
 * field of an enumerated list (`"slot_duration": 30`) `data` lists the values, as for a value outside the list
 * (extensions.md "Allowed values": whatever the value's type).
 */
export function requestFromJson<D extends DescMessage>(schema: D, json: JsonValue): MessageShape<D> {
  try {
    return fromJson(schema, json, { ignoreUnknownFields: true });
  } catch (err) {
    const text = err instanceof Error ? err.message : String(err);
    const messageType = /cannot decode message ([\w.]+) from JSON/.exec(text)?.[1];
    const qualified = /field ([\w.]+) from JSON/.exec(text)?.[1];
    const field = qualified?.split(".").pop() ?? (messageType && fieldHoldingNonObject(schema, json, messageType));
    if (!field) throw invalid("request body is not valid");
    const list = qualified ? ALLOWED_VALUES[qualified.slice(0, qualified.lastIndexOf("."))]?.[field] : undefined;
    if (list) throw notAllowed(field, list.values, `${field} is not valid`);
    throw invalid(`${field} is not valid`);
  }
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
        if (field.presence !== 2 /* IMPLICIT */ && !(key in json)) json[key] = null;
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
  return json;
}

/** The REST JSON of frozen replies (src/domain/frozen.ts): made once, and frozen as well, since it is handed out again. */
const frozenReplies = new WeakMap<MessageShape<DescMessage>, JsonObject>();

export function responseToJson<D extends DescMessage>(schema: D, init: MessageInitShape<D> | MessageShape<D>): JsonObject {
  const message = create(schema, init as MessageInitShape<D>);
  if (!Object.isFrozen(message)) return toRestJson(schema, message);
  return onceFor(frozenReplies, message as MessageShape<DescMessage>, () => deepFreeze(toRestJson(schema, message)));
}
