// The proto contract (callers.md "Clients in the caller's language"): its JSON names load in every runtime, and `buf breaking` against the released contract (npm run lint:proto) refuses what breaks existing clients and lets additions through.
import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createFileRegistry, fromBinary, type DescMessage } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema, type FileDescriptorProto } from "@bufbuild/protobuf/wkt";
import { afterEach, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BUF = join(ROOT, "node_modules/.bin/buf");
const RELEASED = join(ROOT, "proto/released.binpb");

/** buf's answer: its exit code and what it printed (one JSON line per problem with --error-format json). */
async function buf(cwd: string, ...args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(BUF, args, { cwd, encoding: "utf8" });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const { code, stdout, stderr } = err as { code: number; stdout: string; stderr: string };
    return { code, out: stdout + stderr };
  }
}

/** The messages of scheduling.* in a descriptor set, after `change` (if any) is made to its files. */
function messagesOf(set: Uint8Array, change?: (files: FileDescriptorProto[]) => void): DescMessage[] {
  const files = fromBinary(FileDescriptorSetSchema, set);
  change?.(files.file);
  return [...createFileRegistry(files)].filter((d): d is DescMessage => d.kind === "message" && d.typeName.startsWith("scheduling."));
}

/**
 * The names in one message that a JSON name must not repeat, as upb (the core of Python's protobuf, Ruby's and
 * PHP's) checks them when it loads a file: the other fields' names and JSON names, and every oneof's name,
 * the synthetic `_<field>` of each proto3 `optional` field included. protoc and protobuf-java check less.
 */
function jsonNameClashes(message: DescMessage): string[] {
  const clashes: string[] = [];
  const oneofs = message.proto.oneofDecl.map((o) => o.name);
  for (const field of message.fields) {
    const others = [...message.fields.filter((f) => f !== field).flatMap((f) => [f.name, f.jsonName]), ...oneofs];
    if (others.includes(field.jsonName)) clashes.push(`${field.parent.typeName}.${field.name}: JSON name ${field.jsonName}`);
  }
  return clashes;
}

describe("the proto contract", () => {
  it("has no JSON name that clashes with another name of its message, so every runtime loads it (Python's protobuf refused `_destroy`)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "contract-"));
    try {
      const { code, out } = await buf(ROOT, "build", "--as-file-descriptor-set", "-o", join(dir, "set.binpb"));
      expect(code, out).toBe(0);
      const messages = messagesOf(readFileSync(join(dir, "set.binpb")));
      expect(messages.length).toBeGreaterThan(100);
      expect(messages.flatMap(jsonNameClashes)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("finds the clash it looks for: the json_name `_destroy` the optional field `destroy` had, its synthetic oneof's name", () => {
    const messages = messagesOf(readFileSync(RELEASED), (files) => {
      const attributes = files.find((f) => f.name === "scheduling/v1/event.proto")?.messageType.find((m) => m.name === "EventQuestionAttributes");
      const destroy = attributes?.field.find((f) => f.name === "destroy");
      expect(destroy?.proto3Optional).toBe(true);
      destroy!.jsonName = "_destroy";
    });
    expect(messages.flatMap(jsonNameClashes)).toEqual(["scheduling.v1.EventQuestionAttributes.destroy: JSON name _destroy"]);
  });

  describe("buf breaking against proto/released.binpb", () => {
    let dir: string | undefined;
    afterEach(() => {
      if (dir) rmSync(dir, { recursive: true, force: true });
      dir = undefined;
    });

    /** A copy of proto/ and buf.yaml with `edits` made to event.proto; buf's problems with it, by rule. */
    async function breaking(edits: [string, string][], extraFiles: Record<string, string> = {}): Promise<{ code: number; rules: string[]; out: string }> {
      dir = mkdtempSync(join(tmpdir(), "contract-"));
      cpSync(join(ROOT, "proto"), join(dir, "proto"), { recursive: true });
      cpSync(join(ROOT, "buf.yaml"), join(dir, "buf.yaml"));
      const file = join(dir, "proto/scheduling/v1/event.proto");
      let text = readFileSync(file, "utf8");
      for (const [from, to] of edits) {
        expect(text, `event.proto has ${from}`).toContain(from);
        text = text.replace(from, to);
      }
      writeFileSync(file, text);
      for (const [name, content] of Object.entries(extraFiles)) writeFileSync(join(dir, "proto", name), content);
      const { code, out } = await buf(dir, "breaking", "--against", RELEASED, "--error-format", "json");
      const rules = out.split("\n").filter((l) => l.startsWith("{")).map((l) => (JSON.parse(l) as { type: string }).type).sort();
      return { code, rules, out };
    }

    it("passes for proto/ as it is (npm run lint:proto runs the same)", async () => {
      const { code, out } = await buf(ROOT, "breaking", "--against", RELEASED);
      expect({ code, out }).toEqual({ code: 0, out: "" });
    });

    it("fails for a JSON name changed, a type changed and a field deleted without reserving its name and number, naming each", async () => {
      const { code, rules } = await breaking([
        ["optional string question_id = 2;", 'optional string question_id = 2 [json_name = "qid"];'],
        ["optional int32 order_number = 4;", "optional int64 order_number = 4;"],
        ["optional bool required = 3;", ""],
      ]);
      expect(code).not.toBe(0);
      expect(rules).toEqual(["FIELD_NO_DELETE_UNLESS_NAME_RESERVED", "FIELD_NO_DELETE_UNLESS_NUMBER_RESERVED", "FIELD_SAME_JSON_NAME", "FIELD_WIRE_JSON_COMPATIBLE_TYPE"]);
    }, 60_000);

    it("passes for additions: a field, a message and a service in a new file", async () => {
      const { code, out } = await breaking([["optional bool destroy = 5;", "optional bool destroy = 5;\n  optional string note = 6;"]], {
        "scheduling/v1/added.proto": 'syntax = "proto3";\npackage scheduling.v1;\nmessage AddedRequest {}\nmessage AddedResponse {}\nservice AddedService {\n  rpc Added(AddedRequest) returns (AddedResponse);\n}\n',
      });
      expect({ code, out }).toEqual({ code: 0, out: "" });
    }, 60_000);
  });
});
