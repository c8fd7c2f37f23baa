// The baselines of bench/http.ts in their own process: a bare node:http JSON reply, a bare Express 5 route, a bare grpc-js unary method, a bare node:http2 gRPC reply.
import http from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import * as grpc from "@grpc/grpc-js";
import express from "express";

// BENCH_REST_BODY and BENCH_GRPC_REPLY (base64): the bytes the service answers GET /api/v1/user and GetUser with
// (bench/grpc.ts), so a bare server is measured sending exactly what the service sends.
const body = process.env.BENCH_REST_BODY ?? JSON.stringify({ success: true, message: "user details", data: { id: "0", full_name: "Bench" }, status: 200 });

const bare = http.createServer((_req, res) => {
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
});

const app = express();
app.disable("x-powered-by");
app.disable("etag");
app.get("/api/v1/user", (_req, res) => {
  res.type("application/json").send(body);
});
const viaExpress = http.createServer(app);

function listen(server: http.Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)));
}

// The same path as the service's GetUser, answering fixed bytes: what gRPC over HTTP/2 costs on this machine.
const grpcServer = new grpc.Server();
const reply = process.env.BENCH_GRPC_REPLY === undefined ? Buffer.from(body) : Buffer.from(process.env.BENCH_GRPC_REPLY, "base64");
const identity = (b: Buffer) => b;
grpcServer.addService(
  { GetUser: { path: "/scheduling.v1.UserService/GetUser", requestStream: false, responseStream: false, requestSerialize: identity, requestDeserialize: identity, responseSerialize: identity, responseDeserialize: identity } },
  { GetUser: (_call: grpc.ServerUnaryCall<Buffer, Buffer>, done: grpc.sendUnaryData<Buffer>) => done(null, reply) },
);
const grpcPort = await new Promise<number>((resolve, reject) =>
  grpcServer.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port))),
);

// The least a gRPC unary reply over cleartext HTTP/2 can cost in Node: read the request, answer one framed message
// and the status trailer. No parsing, no routing: the floor under any gRPC server written in JavaScript.
const framed = Buffer.concat([Buffer.from([0, 0, 0, 0, 0]), reply]);
framed.writeUInt32BE(reply.length, 1);
const bareGrpc = http2.createServer();
bareGrpc.on("stream", (stream) => {
  stream.on("data", () => undefined);
  stream.on("end", () => {
    stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
    stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
    stream.end(framed);
  });
});
const bareGrpcPort = await new Promise<number>((resolve) => bareGrpc.listen(0, "127.0.0.1", () => resolve((bareGrpc.address() as AddressInfo).port)));

const [barePort, expressPort] = await Promise.all([listen(bare), listen(viaExpress)]);
process.stdout.write(JSON.stringify({ barePort, expressPort, grpcPort, bareGrpcPort }) + "\n");
process.on("SIGTERM", () => process.exit(0));
