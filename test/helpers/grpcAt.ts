// grpc-js calls to a server other than the run's shared one (tests that start their own server with startServer).
import * as grpc from "@grpc/grpc-js";
import { create, fromBinary, toBinary, type DescMethodBiDiStreaming, type DescMethodUnary, type MessageInitShape, type MessageShape, type DescMessage } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { StatusSchema, type Status } from "../../gen/google/rpc/status_pb.js";

/** A grpc-js channel to `baseUrl` (http://host:port); close it when done. */
export function grpcClientAt(baseUrl: string): grpc.Client {
  return new grpc.Client(baseUrl.replace(/^http:\/\//, ""), grpc.credentials.createInsecure());
}

const serialize = <S extends DescMessage>(schema: S) => (m: MessageShape<S>): Buffer => Buffer.from(toBinary(schema, m));
const deserialize = <S extends DescMessage>(schema: S) => (b: Buffer): MessageShape<S> => fromBinary(schema, b);

/**
 * The ConnectError a grpc-js error stands for: its code and message (grpc-js's own reading of grpc-status and
 * grpc-message), its trailers as metadata, and the details of its `grpc-status-details-bin` trailer decoded as
 * google.rpc.Status with the generated schema, so `findDetails` reads them as on the Connect transports. The
 * decoded Status is the error's `cause`, for tests that compare its code and message with the trailers'.
 */
function grpcJsError(err: grpc.ServiceError): ConnectError {
  const metadata = new Headers();
  let status: Status | undefined;
  for (const [key, values] of Object.entries(err.metadata?.toJSON() ?? {})) {
    if (key === "grpc-status-details-bin") status = fromBinary(StatusSchema, values[0] as Buffer);
    else if (!key.endsWith("-bin")) for (const v of values) metadata.append(key, String(v));
  }
  const error = new ConnectError(err.details, err.code as number as Code, metadata, undefined, status);
  error.details = (status?.details ?? []).map((any) => ({ type: any.typeUrl.slice(any.typeUrl.lastIndexOf("/") + 1), value: any.value }));
  return error;
}

/** One unary call; rejects with a ConnectError carrying the gRPC status code, message and details (grpcJsError). */
export function unaryAt<I extends DescMessage, O extends DescMessage>(
  client: grpc.Client,
  method: DescMethodUnary<I, O>,
  request: MessageInitShape<I>,
  metadata: Record<string, string> = {},
): Promise<MessageShape<O>> {
  const md = new grpc.Metadata();
  for (const [k, v] of Object.entries(metadata)) md.set(k, v);
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      `/${method.parent.typeName}/${method.name}`,
      serialize(method.input),
      deserialize(method.output),
      create(method.input, request),
      md,
      (err, value) => (err ? reject(grpcJsError(err)) : resolve(value as MessageShape<O>)),
    );
  });
}

/** Sends `requests` on one bidirectional stream, half-closes, and collects every answer. */
export function bidiAt<I extends DescMessage, O extends DescMessage>(
  client: grpc.Client,
  method: DescMethodBiDiStreaming<I, O>,
  requests: MessageInitShape<I>[],
): Promise<MessageShape<O>[]> {
  const call = client.makeBidiStreamRequest(`/${method.parent.typeName}/${method.name}`, serialize(method.input), deserialize(method.output));
  const answers: MessageShape<O>[] = [];
  return new Promise((resolve, reject) => {
    call.on("data", (m: MessageShape<O>) => answers.push(m));
    call.on("error", reject);
    call.on("end", () => resolve(answers));
    for (const r of requests) call.write(create(method.input, r));
    call.end();
  });
}
