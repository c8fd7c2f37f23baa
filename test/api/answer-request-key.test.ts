// The host's answer to a request (PublicBookingService.AnswerRequest, the answer page's RPC, with no REST row) is a write like the others: it takes an Idempotency-Key, a public write's of 32+ characters (extensions.md "Idempotency keys").
import { randomUUID } from "node:crypto";
import { Code, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { describe, expect, it } from "vitest";
import { PublicBookingService } from "../../gen/scheduling/v1/public_booking_pb.js";
import { rest, rpcError } from "../helpers/api.js";
import { dayFromToday, newEvent, newHost, utcIso } from "../helpers/bookings.js";
import { useMailServer } from "../helpers/mailServer.js";

const site = useMailServer();

/** A Connect client sending `key` as its Idempotency-Key; `headers` collects each answer's headers. */
function answering(key: string, headers: Headers[] = []) {
  const transport = createConnectTransport({
    baseUrl: site.server().baseUrl,
    httpVersion: "1.1",
    interceptors: [(next) => async (req) => (req.header.set("idempotency-key", key), next(req))],
  });
  const client = createClient(PublicBookingService, transport);
  return (request: { privateKey: string; token: string; answer: string }) => client.answerRequest(request, { onHeader: (h) => headers.push(h) });
}

describe("AnswerRequest under an Idempotency-Key", () => {
  it("refuses a short key before answering; a repeat of the answer under a UUID is the first answer, replayed", async () => {
    const host = await newHost();
    const event = await newEvent(host, { name: "Asked first", requires_confirmation: true });
    const made = await rest("POST", `/public/users/${host.user.url}/events/${event.url}/bookings`, {
      body: { booking: { start_time: utcIso(dayFromToday(4), "10:00"), attendee_name: "Grace", attendee_email: "answer-key@example.com" } },
    });
    expect(made.body.data?.status, JSON.stringify(made.body)).toBe("pending");
    const privateKey = made.body.data.private_key as string;
    const [mail] = await site.smtp().waitFor(1, (m) => m.envelope.to.includes(host.user.email) && (m.parsed.text ?? "").includes(privateKey));
    const token = /\/booking\/\S+\/answer\/([A-Za-z0-9_-]+)/.exec(mail.parsed.text ?? "")?.[1];
    expect(token).toBeDefined();
    const request = { privateKey, token: token!, answer: "confirm" };

    const short = await rpcError(() => answering("retry-1")(request));
    expect([short.code, short.rawMessage]).toEqual([Code.InvalidArgument, "idempotency key of a public write must be at least 32 characters"]);
    expect((await rest("GET", `/public/bookings/${privateKey}`)).body.data.status).toBe("pending");

    const headers: Headers[] = [];
    const key = randomUUID();
    const first = await answering(key, headers)(request);
    const again = await answering(key, headers)(request);
    expect(first.request?.booking?.status).toBe("confirmed");
    expect(again).toEqual(first);
    expect(headers.map((h) => h.get("idempotent-replayed"))).toEqual([null, "true"]);
  });
});
