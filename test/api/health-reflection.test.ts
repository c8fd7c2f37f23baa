// End-to-end test of the Connect-served grpc.health.v1 and grpc.reflection (v1, v1alpha) services, driven by a real @grpc/grpc-js client over HTTP/2.
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import * as grpc from "@grpc/grpc-js";
import {
  create,
  fromBinary,
  toBinary,
  type DescMessage,
  type MessageInitShape,
  type MessageShape,
} from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  HealthCheckRequestSchema,
  HealthCheckResponseSchema,
  HealthCheckResponse_ServingStatus as ServingStatus,
  type HealthCheckResponse,
} from "../../gen/grpc/health/v1/health_pb.js";
import * as v1 from "../../gen/grpc/reflection/v1/reflection_pb.js";
import * as v1alpha from "../../gen/grpc/reflection/v1alpha/reflection_pb.js";
import { file_scheduling_v1_admin } from "../../gen/scheduling/v1/admin_pb.js";
import { file_scheduling_v1_booking } from "../../gen/scheduling/v1/booking_pb.js";
import { file_scheduling_v1_event } from "../../gen/scheduling/v1/event_pb.js";
import { file_scheduling_v1_public_booking } from "../../gen/scheduling/v1/public_booking_pb.js";
import { file_scheduling_v1_question } from "../../gen/scheduling/v1/question_pb.js";
import { file_scheduling_v1_user } from "../../gen/scheduling/v1/user_pb.js";
import { registerHealth } from "../../src/platform/http/health.js";
import { registerReflection } from "../../src/platform/http/reflection.js";

const serialize =
  <S extends DescMessage>(schema: S) =>
  (message: MessageShape<S>): Buffer =>
    Buffer.from(toBinary(schema, message));
const deserialize =
  <S extends DescMessage>(schema: S) =>
  (bytes: Buffer): MessageShape<S> =>
    fromBinary(schema, bytes);

let serving = true;
let servingPolls = 0; // how often the health service asked for the flag
let server: http2.Http2Server;
const sessions = new Set<http2.ServerHttp2Session>();
let client: grpc.Client;

beforeAll(async () => {
  server = http2.createServer(
    connectNodeAdapter({
      routes(router) {
        registerHealth(
          router,
          () => {
            servingPolls++;
            return serving;
          },
          [file_scheduling_v1_user, file_scheduling_v1_event, file_scheduling_v1_booking, file_scheduling_v1_public_booking, file_scheduling_v1_question, file_scheduling_v1_admin].flatMap((f) => f.services.map((s) => s.typeName)),
        );
        registerReflection(router, [
          file_scheduling_v1_user,
          file_scheduling_v1_event,
          file_scheduling_v1_booking,
          file_scheduling_v1_public_booking,
          file_scheduling_v1_question,
          file_scheduling_v1_admin,
        ]);
      },
    }),
  );
  server.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
});

afterAll(async () => {
  client?.close();
  for (const session of sessions) session.destroy();
  await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
});

function check(service: string): Promise<HealthCheckResponse> {
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      "/grpc.health.v1.Health/Check",
      serialize(HealthCheckRequestSchema),
      deserialize(HealthCheckResponseSchema),
      create(HealthCheckRequestSchema, { service }),
      (err, res) => (err || !res ? reject(err ?? new Error("no response")) : resolve(res)),
    );
  });
}

/** Sends all requests on one ServerReflectionInfo stream, half-closes it and collects every response. */
function reflect<Req extends DescMessage, Res extends DescMessage>(
  path: string,
  reqSchema: Req,
  resSchema: Res,
  requests: MessageInitShape<Req>[],
): Promise<MessageShape<Res>[]> {
  return new Promise((resolve, reject) => {
    const call = client.makeBidiStreamRequest(path, serialize(reqSchema), deserialize(resSchema));
    const responses: MessageShape<Res>[] = [];
    call.on("data", (res: MessageShape<Res>) => responses.push(res));
    call.on("error", reject);
    call.on("end", () => resolve(responses));
    for (const request of requests) call.write(create(reqSchema, request));
    call.end();
  });
}

const fileNames = (protos: Uint8Array[]): string[] =>
  protos.map((bytes) => fromBinary(FileDescriptorProtoSchema, bytes).name);

describe("grpc.health.v1.Health (Connect, over grpc-js)", () => {
  it("Check answers SERVING, then NOT_SERVING when the flag flips, and NOT_FOUND for unknown services", async () => {
    serving = true;
    expect((await check("")).status).toBe(ServingStatus.SERVING);
    expect((await check("scheduling.v1.UserService")).status).toBe(ServingStatus.SERVING);
    expect((await check("scheduling.v1.AdminService")).status).toBe(ServingStatus.SERVING);

    serving = false;
    expect((await check("")).status).toBe(ServingStatus.NOT_SERVING);
    expect((await check("scheduling.v1.EventService")).status).toBe(ServingStatus.NOT_SERVING);
    serving = true;

    await expect(check("no.such.Service")).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
    await expect(check("scheduling.v1.NoSuchService")).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
  });

  it("Watch streams the current status and then each change until the client cancels", async () => {
    serving = true;
    const call = client.makeServerStreamRequest(
      "/grpc.health.v1.Health/Watch",
      serialize(HealthCheckRequestSchema),
      deserialize(HealthCheckResponseSchema),
      create(HealthCheckRequestSchema, { service: "scheduling.v1.UserService" }),
    );
    const seen: ServingStatus[] = [];
    const ended = new Promise<grpc.status>((resolve) => {
      call.on("error", (err: grpc.ServiceError) => resolve(err.code));
      call.on("end", () => resolve(grpc.status.OK));
    });
    const twoUpdates = new Promise<void>((resolve) => {
      call.on("data", (res: HealthCheckResponse) => {
        seen.push(res.status);
        if (seen.length === 1) serving = false; // flip only after the initial status arrived
        if (seen.length === 2) resolve();
      });
    });
    await twoUpdates;
    expect(seen).toEqual([ServingStatus.SERVING, ServingStatus.NOT_SERVING]);
    call.cancel();
    expect(await ended).toBe(grpc.status.CANCELLED);
    serving = true;

    // The server-side poll loop must stop once the client has gone away.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const pollsAfterCancel = servingPolls;
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(servingPolls).toBe(pollsAfterCancel);
  }, 10_000);

  it("Watch on an unknown service reports SERVICE_UNKNOWN without ending the call", async () => {
    const call = client.makeServerStreamRequest(
      "/grpc.health.v1.Health/Watch",
      serialize(HealthCheckRequestSchema),
      deserialize(HealthCheckResponseSchema),
      create(HealthCheckRequestSchema, { service: "no.such.Service" }),
    );
    call.on("error", () => undefined); // CANCELLED after call.cancel()
    const first = await new Promise<HealthCheckResponse>((resolve) => call.once("data", resolve));
    expect(first.status).toBe(ServingStatus.SERVICE_UNKNOWN);
    call.cancel();
  });
});

describe("grpc.reflection ServerReflectionInfo (Connect, over grpc-js)", () => {
  it("v1: list_services, file_containing_symbol, file_by_filename, extensions and errors on one stream", async () => {
    const responses = await reflect(
      "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
      v1.ServerReflectionRequestSchema,
      v1.ServerReflectionResponseSchema,
      [
        { host: "localhost", messageRequest: { case: "listServices", value: "*" } },
        { host: "localhost", messageRequest: { case: "fileContainingSymbol", value: "scheduling.v1.UserService" } },
        { messageRequest: { case: "fileContainingSymbol", value: "no.such.Symbol" } },
        { messageRequest: { case: "fileByFilename", value: "scheduling/v1/booking.proto" } },
        { messageRequest: { case: "fileContainingSymbol", value: "scheduling.v1.UserService.GetUser" } },
        { messageRequest: { case: "fileContainingSymbol", value: "grpc.health.v1.HealthCheckResponse.ServingStatus" } },
        { messageRequest: { case: "allExtensionNumbersOfType", value: "scheduling.v1.User" } },
        {
          messageRequest: {
            case: "fileContainingExtension",
            value: { containingType: "scheduling.v1.User", extensionNumber: 100 },
          },
        },
      ],
    );
    expect(responses).toHaveLength(8);
    const [list, symbol, unknown, byName, method, nested, extNumbers, ext] = responses;

    // list_services
    expect(list.validHost).toBe("localhost");
    expect(list.originalRequest?.messageRequest).toEqual({ case: "listServices", value: "*" });
    expect(list.messageResponse.case).toBe("listServicesResponse");
    const names = list.messageResponse.case === "listServicesResponse" ? list.messageResponse.value.service.map((s) => s.name) : [];
    expect(names).toEqual(
      expect.arrayContaining([
        "scheduling.v1.UserService",
        "scheduling.v1.AdminService",
        "scheduling.v1.EventService",
        "scheduling.v1.BookingService",
        "scheduling.v1.PublicBookingService",
        "scheduling.v1.QuestionService",
        "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection",
        "grpc.reflection.v1alpha.ServerReflection",
      ]),
    );

    // file_containing_symbol: the file plus its transitive imports, each once
    expect(symbol.validHost).toBe("localhost");
    expect(symbol.originalRequest?.messageRequest).toEqual({
      case: "fileContainingSymbol",
      value: "scheduling.v1.UserService",
    });
    expect(symbol.messageResponse.case).toBe("fileDescriptorResponse");
    const symbolFiles =
      symbol.messageResponse.case === "fileDescriptorResponse" ? fileNames(symbol.messageResponse.value.fileDescriptorProto) : [];
    expect(symbolFiles[0]).toBe("scheduling/v1/user.proto");
    expect(symbolFiles).toContain("google/protobuf/struct.proto");
    expect(new Set(symbolFiles).size).toBe(symbolFiles.length);
    const userProto =
      symbol.messageResponse.case === "fileDescriptorResponse"
        ? fromBinary(FileDescriptorProtoSchema, symbol.messageResponse.value.fileDescriptorProto[0])
        : undefined;
    expect(userProto?.service.map((s) => s.name)).toContain("UserService");
    expect(userProto?.dependency).toContain("google/protobuf/struct.proto");

    // unknown symbol
    expect(unknown.messageResponse).toMatchObject({ case: "errorResponse", value: { errorCode: 5 } });

    // file_by_filename: booking.proto imports other scheduling files; every import appears once
    expect(byName.messageResponse.case).toBe("fileDescriptorResponse");
    const bookingFiles =
      byName.messageResponse.case === "fileDescriptorResponse" ? fileNames(byName.messageResponse.value.fileDescriptorProto) : [];
    expect(bookingFiles[0]).toBe("scheduling/v1/booking.proto");
    expect(new Set(bookingFiles).size).toBe(bookingFiles.length);
    const bookingProto =
      byName.messageResponse.case === "fileDescriptorResponse"
        ? fromBinary(FileDescriptorProtoSchema, byName.messageResponse.value.fileDescriptorProto[0])
        : undefined;
    for (const dep of bookingProto?.dependency ?? []) expect(bookingFiles).toContain(dep);

    // methods and nested enums resolve too
    expect(method.messageResponse.case).toBe("fileDescriptorResponse");
    expect(nested.messageResponse.case).toBe("fileDescriptorResponse");
    const nestedFiles =
      nested.messageResponse.case === "fileDescriptorResponse" ? fileNames(nested.messageResponse.value.fileDescriptorProto) : [];
    expect(nestedFiles).toEqual(["grpc/health/v1/health.proto"]);

    // extensions: none are declared
    expect(extNumbers.messageResponse).toMatchObject({
      case: "allExtensionNumbersResponse",
      value: { baseTypeName: "scheduling.v1.User", extensionNumber: [] },
    });
    expect(ext.messageResponse).toMatchObject({ case: "errorResponse", value: { errorCode: 5 } });
  });

  it("v1alpha: the same answers on the deprecated service", async () => {
    const responses = await reflect(
      "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
      v1alpha.ServerReflectionRequestSchema,
      v1alpha.ServerReflectionResponseSchema,
      [
        { host: "h", messageRequest: { case: "listServices", value: "" } },
        { host: "h", messageRequest: { case: "fileContainingSymbol", value: "scheduling.v1.UserService" } },
        { host: "h", messageRequest: { case: "fileContainingSymbol", value: "scheduling.v1.Nope" } },
      ],
    );
    expect(responses).toHaveLength(3);
    const [list, symbol, unknown] = responses;

    expect(list.$typeName).toBe("grpc.reflection.v1alpha.ServerReflectionResponse");
    expect(list.validHost).toBe("h");
    const names = list.messageResponse.case === "listServicesResponse" ? list.messageResponse.value.service.map((s) => s.name) : [];
    expect(names).toEqual(
      expect.arrayContaining(["scheduling.v1.UserService", "scheduling.v1.AdminService", "grpc.health.v1.Health"]),
    );

    expect(symbol.originalRequest?.messageRequest).toEqual({
      case: "fileContainingSymbol",
      value: "scheduling.v1.UserService",
    });
    const files =
      symbol.messageResponse.case === "fileDescriptorResponse" ? fileNames(symbol.messageResponse.value.fileDescriptorProto) : [];
    expect(files).toContain("scheduling/v1/user.proto");
    expect(files).toContain("google/protobuf/struct.proto");

    expect(unknown.messageResponse).toMatchObject({ case: "errorResponse", value: { errorCode: 5 } });
  });
});
