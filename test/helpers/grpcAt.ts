// grpc-js calls to a server other than the run's shared one (tests that start their own server with startServer).
import * as grpc from "@grpc/grpc-js";
import { create, fromBinary, toBinary, type DescMethodBiDiStreaming, type DescMethodUnary, type MessageInitShape, type MessageShape, type DescMessage } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";

/** A grpc-js channel to `baseUrl` (http://host:port); close it when done. */
export function grpcClientAt(baseUrl: string): grpc.Client {
  return new grpc.Client(baseUrl.replace(/^http:\/\//, ""), grpc.credentials.createInsecure());
}

const serialize = <S extends DescMessage>(schema: S) => (m: MessageShape<S>): Buffer => Buffer.from(toBinary(schema, m));
const deserialize = <S extends DescMessage>(schema: S) => (b: Buffer): MessageShape<S> => fromBinary(schema, b);

/** One unary call; rejects with a ConnectError carrying the gRPC status code and message. */
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
      (err, value) => (err ? reject(new ConnectError(err.details, err.code as number as Code)) : resolve(value as MessageShape<O>)),
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
