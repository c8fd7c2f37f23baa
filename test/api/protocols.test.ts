// One port, four protocols: the same account answers over REST, Connect (HTTP/1.1 and h2c), gRPC-Web and gRPC.
import { Code } from "@connectrpc/connect";
import { describe, expect, it, beforeAll } from "vitest";
import { UserService } from "../../gen/scheduling/v1/user_pb.js";
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

  it("GET /healthz is 200 ok once the database answers", async () => {
    const res = await fetch(`${baseUrl()}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
  });
});
