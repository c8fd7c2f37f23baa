// NoSQL operator injection is inert: `$`-objects in url, e-mail and id fields never match anything, on REST and RPC.
import { beforeAll, describe, expect, it } from "vitest";
import { UserService } from "../../gen/scheduling/v1/user_pb.js";
import { baseUrl, newAccount, rest, type Json } from "../helpers/api.js";
import { rawRequest } from "../helpers/raw.js";

let attacker: { key: string; user: Json };
let victim: { key: string; user: Json };
let victimEventId: string;
let victimQuestionId: string;

beforeAll(async () => {
  attacker = await newAccount({ full_name: "Operator Injector" });
  victim = await newAccount({ full_name: "Operator Victim" });
  const q = await rest("POST", "/questions", { key: victim.key, body: { question: { title: "Company", question_type: "one_line" } } });
  victimQuestionId = q.body.data.id;
  const ev = await rest("POST", "/events", { key: victim.key, body: { event: { name: "Secret", url: "secret-event" } } });
  victimEventId = ev.body.data.id;
});

/** A Connect JSON call with a raw body, as an attacker would send it. */
async function connectJson(service: string, method: string, body: unknown, key: string): Promise<{ status: number; body: Json }> {
  const ans = await rawRequest(baseUrl(), {
    method: "POST",
    path: `/${service}/${method}`,
    headers: { "content-type": "application/json", "x-api-key": key },
    body: JSON.stringify(body),
  });
  return { status: ans.status, body: JSON.parse(ans.text) };
}

describe("operator objects in string fields are refused before any query", () => {
  const operators = [{ $ne: "" }, { $ne: null }, { $gt: "" }, { $regex: ".*" }, { $where: "true" }, { $in: ["a"] }];

  for (const op of operators) {
    const shown = JSON.stringify(op);
    it(`user url availability with url ${shown}: 422, never an answer about another url`, async () => {
      const res = await rest("POST", "/users/validate_url_availability", { key: attacker.key, body: { user: { url: op } } });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ success: false, message: "url is not valid", data: {}, status: "unprocessable_entity" });
    });

    it(`event url availability with url ${shown}: 422`, async () => {
      const res = await rest("POST", "/events/validate_url_availability", { key: attacker.key, body: { event: { url: op, id: op } } });
      expect(res.status).toBe(422);
      expect(res.body.success).toBe(false);
    });

    it(`account creation with email ${shown}: 422, no account and no "taken" answer`, async () => {
      const res = await rest("POST", "/admin/accounts", { admin: true, body: { account: { email: op, full_name: "Injected" } } });
      expect(res.status).toBe(422);
      expect(res.body.message).toBe("email is not valid");
    });

    it(`Connect CheckUserUrlAvailability with url ${shown}: INVALID_ARGUMENT`, async () => {
      const res = await connectJson(UserService.typeName, "CheckUserUrlAvailability", { user: { url: op } }, attacker.key);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("invalid_argument");
    });

    it(`Connect GetEvent with id ${shown}: INVALID_ARGUMENT, never the victim's event`, async () => {
      const res = await connectJson("scheduling.v1.EventService", "GetEvent", { id: op }, attacker.key);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("invalid_argument");
    });
  }

  it("an operator as the REST path id is just an unknown id: 404", async () => {
    for (const id of [JSON.stringify({ $ne: null }), "[$ne]=1", "$where", "{\"$gt\":\"\"}"]) {
      const res = await rest("GET", `/events/${encodeURIComponent(id)}`, { key: attacker.key });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ success: false, message: "event not found", data: {}, status: "not_found" });
      const upd = await rest("PATCH", `/questions/${encodeURIComponent(id)}`, { key: attacker.key, body: { question: { title: "x" } } });
      expect(upd.status).toBe(404);
    }
  });

  it("the url of the victim written as an operator is not matched: the victim's url stays taken only as itself", async () => {
    const asText = await rest("POST", "/users/validate_url_availability", { key: attacker.key, body: { user: { url: victim.user.url } } });
    expect(asText.body.data).toEqual({ available: false });
    // Sent as text, an operator is a literal candidate url: refused as malformed or free, never "taken" by the victim.
    const asRegexText = await rest("POST", "/users/validate_url_availability", { key: attacker.key, body: { user: { url: `{"$regex":"${victim.user.url}"}` } } });
    if (asRegexText.status === 200) expect(asRegexText.body.data).toEqual({ available: true });
    else expect(asRegexText.status).toBe(422);
  });

  it("an API key header that spells an operator is just a wrong key", async () => {
    for (const key of ['{"$ne":null}', "[$ne]", "$gt"]) {
      const res = await rest("GET", "/user", { key });
      expect(res.status).toBe(401);
      expect(res.body.message).toBe("Invalid api_key");
    }
  });

  it("the victim's event and question are still there and unchanged", async () => {
    const ev = await rest("GET", `/events/${victimEventId}`, { key: victim.key });
    expect(ev.body.data.name).toBe("Secret");
    const qs = await rest("GET", "/questions", { key: victim.key });
    expect(qs.body.data.map((q: Json) => q.id)).toEqual([victimQuestionId]);
    expect((await rest("GET", `/events/${victimEventId}`, { key: attacker.key })).status).toBe(404);
  });
});
