// The names a REST write's object may hold, from the route table and the proto descriptors: unknown ones are a 422 (extensions.md "Unknown fields (REST)").
import type { DescField, DescMessage } from "@bufbuild/protobuf";
import type { JsonObject } from "./json.js";
import { restNameOf } from "./schemaFacts.js";
import { methodOf, probeData, type RestRoute, type RpcRoute } from "./table.js";

/*
 * Why here and not in protobuf: REST bodies are read with ignoreUnknownFields (src/platform/rest/json.ts), since a
 * REST object takes names protobuf's reader does not (the resource's read-only names, sent back as GET returned
 * them) and names others by REST names. (RPC JSON requests are refused by protobuf's own rule:
 * src/platform/transport/jsonRequests.ts.) A REST client has no generated code to catch `guest_email_limit` for
 * `guest_emails_limit`: it got a 201 with guests turned off (issue 26). So every JSON write row is checked here, before its RPC runs, against what its
 * request message takes plus what the resource's own answer carries (read-only names such as `id` or
 * `absolute_url` are accepted and ignored, so an object can be sent back as GET returned it).
 */

/** What one object of a body may hold. */
interface ObjectRule {
  /** Names the path takes (REST names: the proto names but for schemaFacts.ts REST_NAMES), each with the rule of the object it holds, "any" for free-form JSON, or null for a value. */
  readonly takes: ReadonlyMap<string, ObjectRule | "any" | null>;
  /** Other names taken for them: protobuf's JSON names (lowerCamelCase), and the proto name of a field REST names otherwise. */
  readonly aliases: ReadonlyMap<string, string>;
  /** Names of the resource's answer that a write does not take: accepted and ignored. */
  readonly ignored: ReadonlySet<string>;
}

/** The objects a row's body carries (`event`, `bookings`), each with its rule. */
export interface BodyRule {
  readonly objects: ReadonlyMap<string, ObjectRule>;
  /**
   * A body that is the request itself, without an object around it (`POST /reminders/<id>/preview` takes
   * `{"booking_id"}`): its top-level names are checked against the request's fields.
   */
  readonly flat?: ObjectRule;
  /** The names the path takes, as paths below the body's object (`name`, `location`, `location.details`). */
  readonly allowed: readonly string[];
}

/** google.protobuf.Struct, Value and ListValue hold any JSON; other well-known types are values. */
function isFreeForm(desc: DescMessage): boolean {
  return desc.typeName === "google.protobuf.Struct" || desc.typeName === "google.protobuf.Value" || desc.typeName === "google.protobuf.ListValue";
}

/** The message a field holds objects of (itself or as list items), unless it is free-form or a well-known value. */
function objectMessage(field: DescField): DescMessage | "any" | undefined {
  const desc = field.fieldKind === "message" ? field.message : field.fieldKind === "list" && field.listKind === "message" ? field.message : undefined;
  if (desc === undefined) return field.fieldKind === "map" ? "any" : undefined;
  if (isFreeForm(desc)) return "any";
  return desc.typeName.startsWith("google.protobuf.") ? undefined : desc;
}

/** The rule of an object the path writes as `input`, whose answer shows it as `answers` (read-only names). */
function ruleOf(input: DescMessage, answers: readonly DescMessage[], seen: ReadonlySet<string> = new Set()): ObjectRule {
  const takes = new Map<string, ObjectRule | "any" | null>();
  const aliases = new Map<string, string>();
  const ignored = new Set<string>();
  const path = new Set([...seen, input.typeName]);
  for (const field of input.fields) {
    const name = restNameOf(field);
    for (const other of [field.jsonName, field.name]) if (other !== name) aliases.set(other, name);
    const inner = objectMessage(field);
    if (inner === undefined || inner === "any") {
      takes.set(name, inner === "any" ? "any" : null);
      continue;
    }
    // A recursive message (none today) is taken as a value below its first level rather than expanded forever.
    if (path.has(inner.typeName)) {
      takes.set(name, "any");
      continue;
    }
    const shown = answers.flatMap((a) => {
      const f = a.fields.find((x) => x.name === field.name);
      const m = f ? objectMessage(f) : undefined;
      return m === undefined || m === "any" ? [] : [m];
    });
    takes.set(name, ruleOf(inner, shown, path));
  }
  for (const answer of answers) {
    for (const field of answer.fields) {
      const name = restNameOf(field);
      if (takes.has(name) || aliases.has(name)) continue;
      for (const other of [name, field.name, field.jsonName]) if (!aliases.has(other)) ignored.add(other);
    }
  }
  return { takes, aliases, ignored };
}

/** The message of the resource a row answers with: what its `data` picks (or its whole answer), as one object. */
function answerMessage(route: RpcRoute, objectName: string): DescMessage | undefined {
  const probe = probeData(route);
  if (!probe) return undefined;
  const field = probe.picked === probe.answer ? methodOf(route).output.fields.find((f) => f.name === objectName) : probe.fieldOf(probe.picked);
  const m = field ? objectMessage(field) : undefined;
  return m === undefined || m === "any" ? undefined : m;
}

/** The names below a rule as paths (`location`, `location.name`), in the message's order. */
function pathsOf(rule: ObjectRule, prefix = ""): string[] {
  return [...rule.takes].flatMap(([name, inner]) => [prefix + name, ...(inner !== null && inner !== "any" ? pathsOf(inner, `${prefix}${name}.`) : [])]);
}

/**
 * The rule of a JSON write row: its body's objects are the message and list fields of its request (each row has
 * one, which extensions.md "Bodies without their object" requires), and the resource's answer is what this row, the
 * GET row of the same path and the GET rows of its `shownBy` answer with.
 */
export function bodyRuleOf(route: RpcRoute, routes: readonly RestRoute[]): BodyRule {
  const input = methodOf(route).input;
  const objects = new Map<string, ObjectRule>();
  const shown = new Set([route.path, ...(route.shownBy ?? [])]);
  const reads = routes.filter((r): r is RpcRoute => r.kind === "rpc" && r.method === "GET" && shown.has(r.path));
  for (const field of input.fields) {
    const inner = objectMessage(field);
    if (inner === undefined || inner === "any") continue;
    const answers = [route, ...reads].flatMap((r) => answerMessage(r, field.name) ?? []);
    objects.set(field.name, ruleOf(inner, answers));
  }
  if (objects.size === 0) {
    const flat = ruleOf(input, []);
    return { objects, flat, allowed: pathsOf(flat, "") };
  }
  const prefixed = objects.size > 1;
  const allowed = [...objects].flatMap(([name, rule]) => pathsOf(rule, prefixed ? `${name}.` : ""));
  return { objects, allowed };
}

/**
 * The rule of a body that carries fewer of its request's names than the message holds: a multipart upload's
 * `user` object takes only its file, `profile_picture` (`filename` and `profile_picture_text` are the gateway's
 * own, filled from the form). Names left out are unknown, unless the resource's answer shows them.
 */
export function takingOnly(rule: BodyRule, names: readonly string[]): BodyRule {
  const objects = new Map(
    [...rule.objects].map(([name, r]) => [name, { ...r, takes: new Map([...r.takes].filter(([n]) => names.includes(n))) }] as const),
  );
  const prefixed = objects.size > 1;
  return { objects, allowed: [...objects].flatMap(([name, r]) => pathsOf(r, prefixed ? `${name}.` : "")) };
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function collect(rule: ObjectRule, value: unknown, prefix: string, out: string[]): void {
  const items = Array.isArray(value) ? value : [value];
  for (const item of items) {
    if (!isObject(item)) continue;
    for (const key of Object.keys(item)) {
      const name = rule.aliases.get(key) ?? key;
      const inner = rule.takes.get(name);
      if (inner === undefined) {
        if (!rule.ignored.has(key)) out.push(prefix + key);
      } else if (inner !== null && inner !== "any") {
        collect(inner, item[key], `${prefix}${name}.`, out);
      }
    }
  }
}

/**
 * The names in `body`'s objects (or in a flat body) that the path does not take, as paths, each once, in the body's
 * order. Top-level keys beside the objects are not looked at: a body without its object (or with it misspelt) is
 * the service's 400 `missing params`.
 */
export function unknownFields(rule: BodyRule, body: JsonObject): string[] {
  const out: string[] = [];
  if (rule.flat) collect(rule.flat, body, "", out);
  const prefixed = rule.objects.size > 1;
  for (const [name, objectRule] of rule.objects) collect(objectRule, body[name], prefixed ? `${name}.` : "", out);
  return [...new Set(out)];
}
