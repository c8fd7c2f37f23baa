// One port, four protocols: the same account answers over REST, Connect (HTTP/1.1 and h2c), gRPC-Web and gRPC.
import * as grpc from "@grpc/grpc-js";
import { Code, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { describe, expect, it, beforeAll } from "vitest";
import { UserService } from "../../gen/scheduling/v1/user_pb.js";
import { grpcClientAt, unaryAt } from "../helpers/grpcAt.js";
import { ok, PROTOCOLS, type Call } from "../helpers/calls.js";
import { baseUrl, CONNECT_KINDS, connectClient, grpcUnary, newAccount, rest, rpcError, type Json } from "../helpers/api.js";

let account: { key: string; user: Json };
beforeAll(async () => {
  account = await newAccount({ full_name: "Grace Hopper" });
});

describe("every protocol on the one port", () => {
  it("REST GET /user answers in the envelope", async () => {
    const res = await rest("GET", "/user", { key: account.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, message: "user details", data: expect.any(Object), status: 200 });
    expect(res.body.data.full_name).toBe("Grace Hopper");
    expect(res.body.data.api_key).toBe(account.key);
  });

  for (const kind of CONNECT_KINDS) {
    it(`${kind}: GetUser returns the same account`, async () => {
      const client = connectClient(UserService, kind, account.key);
      const res = await client.getUser({});
      expect(res.user?.id).toBe(account.user.id);
      expect(res.user?.fullName).toBe("Grace Hopper");
      expect(res.user?.avatarName).toBe("GH");
    });

    it(`${kind}: a missing key is UNAUTHENTICATED with the spec message`, async () => {
      const err = await rpcError(() => connectClient(UserService, kind).getUser({}));
      expect(err.code).toBe(Code.Unauthenticated);
      expect(err.rawMessage).toBe("api_key is missing");
    });
  }

  it("grpc-js: GetUser over HTTP/2 with prior knowledge", async () => {
    const res = await grpcUnary(UserService, "getUser", {}, account.key);
    expect(res.user?.email).toBe(account.user.email);
  });

  it("grpc-js: an invalid key is UNAUTHENTICATED", async () => {
    const err = await rpcError(() => grpcUnary(UserService, "getUser", {}, "x".repeat(73)));
    expect(err.code).toBe(Code.Unauthenticated);
    expect(err.rawMessage).toBe("Invalid api_key");
  });

  it("a REST PATCH of multi-word fields is seen over gRPC and Connect", async () => {
    const mine = await newAccount();
    const patch = await rest("PATCH", "/user", {
      key: mine.key,
      body: { user: { full_name: "Katherine Johnson", time_format: "24_hours", date_format: "2023-12-31", start_day_of_week: 1 } },
    });
    expect(patch.status).toBe(200);
    expect(patch.body.data).toMatchObject({ full_name: "Katherine Johnson", time_format: "24_hours", date_format: "2023-12-31", avatar_name: "KJ" });
    const viaGrpc = await grpcUnary(UserService, "getUserSettings", {}, mine.key);
    expect(viaGrpc.settings).toMatchObject({ fullName: "Katherine Johnson", timeFormat: "24_hours", startDayOfWeek: 1 });
    const viaConnect = await connectClient(UserService, "connect-h2", mine.key).updateUser({ user: { locale: "fr", showMessageButtonOnEvents: true } });
    expect(viaConnect.user).toMatchObject({ locale: "fr", fullName: "Katherine Johnson" });
    const settings = await rest("GET", "/user/settings", { key: mine.key });
    expect(settings.body.data).toMatchObject({ locale: "fr", show_message_button_on_events: true, start_day_of_week: 1 });
  });

  it("GetUser answers the account as it now is after each write, on every protocol and encoding that answered before it", async () => {
    const mine = await newAccount({ full_name: "Ada Lovelace" });
    const getUser: Call = { service: UserService, rpc: "getUser", request: {}, rest: { method: "GET", path: "/user" }, pick: "user" };
    const binary = createClient(UserService, createConnectTransport({ baseUrl: baseUrl(), httpVersion: "1.1", useBinaryFormat: true }));
    const names = async () => [
      ...(await Promise.all(PROTOCOLS.map(async (p) => (await ok(p, mine.key, getUser)).full_name as string))),
      (await binary.getUser({}, { headers: { "x-api-key": mine.key } })).user?.fullName,
    ];
    let expected = "Ada Lovelace";
    for (const next of ["Mary Jackson", "Dorothy Vaughan"]) {
      // Twice: the second answer of each protocol is the one a replica made from the snapshot it holds.
      expect(await names()).toEqual(Array(PROTOCOLS.length + 1).fill(expected));
      expect(await names()).toEqual(Array(PROTOCOLS.length + 1).fill(expected));
      expect((await rest("PATCH", "/user", { key: mine.key, body: { user: { full_name: next } } })).status).toBe(200);
      expected = next;
      expect(await names()).toEqual(Array(PROTOCOLS.length + 1).fill(expected));
    }
  });

  it("grpc-js: unary calls cancelled by the caller at any moment leave the server answering", async () => {
    const client = grpcClientAt(baseUrl());
    try {
      const md = new grpc.Metadata();
      md.set("x-api-key", account.key);
      const identity = (b: Buffer) => b;
      const outcomes = await Promise.all(
        Array.from(
          { length: 200 },
          (_, i) =>
            new Promise<number>((resolve) => {
              const call = client.makeUnaryRequest("/scheduling.v1.UserService/GetUser", identity, identity, Buffer.alloc(0), md, (err) => resolve(err ? err.code : 0));
              if (i % 4 === 0) call.cancel();
              else setTimeout(() => call.cancel(), i % 3);
            }),
        ),
      );
      expect(outcomes.every((code) => code === 0 || code === grpc.status.CANCELLED)).toBe(true);
      expect(outcomes.filter((code) => code === grpc.status.CANCELLED).length).toBeGreaterThan(0);
      expect((await unaryAt(client, UserService.method.getUser, {}, { "x-api-key": account.key })).user?.fullName).toBe("Grace Hopper");
    } finally {
      client.close();
    }
  });

  it("GET /healthz is 200 ok once the database answers", async () => {
    const res = await fetch(`${baseUrl()}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
  });
});
