// Unit tests for src/domain/frozen.ts: what is frozen stays frozen all the way down, and only frozen keys are remembered.
import { create, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { GetUserResponseSchema } from "../../gen/scheduling/v1/user_pb.js";
import { deepFreeze, onceFor } from "../../src/domain/frozen.js";

describe("deepFreeze", () => {
  it("freezes a message and the messages it holds, so no field can be changed", () => {
    const reply = deepFreeze(create(GetUserResponseSchema, { user: { fullName: "Ada Lovelace" } }));
    expect(Object.isFrozen(reply)).toBe(true);
    expect(Object.isFrozen(reply.user)).toBe(true);
    expect(() => {
      (reply.user as { fullName: string }).fullName = "Someone Else";
    }).toThrow(TypeError);
    expect(reply.user?.fullName).toBe("Ada Lovelace");
    // Encoding reads a frozen message as it reads any other.
    expect(toBinary(GetUserResponseSchema, reply)).toEqual(toBinary(GetUserResponseSchema, create(GetUserResponseSchema, { user: { fullName: "Ada Lovelace" } })));
  });

  it("refuses a value holding a typed array, which JavaScript cannot freeze", () => {
    expect(() => deepFreeze({ bytes: new Uint8Array([1]) })).toThrow(TypeError);
  });

  it("leaves primitives and null alone", () => {
    expect(deepFreeze("x")).toBe("x");
    expect(deepFreeze(null)).toBe(null);
  });
});

describe("onceFor", () => {
  it("makes the value of a frozen key once", () => {
    const memo = new WeakMap<object, number>();
    const key = Object.freeze({});
    let made = 0;
    const make = () => ++made;
    expect(onceFor(memo, key, make)).toBe(1);
    expect(onceFor(memo, key, make)).toBe(1);
    expect(onceFor(memo, Object.freeze({}), make)).toBe(2);
  });

  it("makes the value of an unfrozen key every time, since the key may have changed", () => {
    const memo = new WeakMap<{ n: number }, number>();
    const key = { n: 1 };
    expect(onceFor(memo, key, (k) => k.n)).toBe(1);
    key.n = 2;
    expect(onceFor(memo, key, (k) => k.n)).toBe(2);
  });
});
