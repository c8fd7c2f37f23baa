// Load test of GET /user over REST, Connect and gRPC against bare node:http, Express and HTTP/2 gRPC baselines in the same run (autocannon and grpc-js, and wrk and h2load); compressed answers beside plain ones; start-up time and peak RSS.
import http from "node:http";
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import autocannon from "autocannon";
import { CONNECTIONS, cpuMark, cpuPerRequest, fmt, GRPC_CHANNELS, h2loadGrpc, machine, median, SECONDS, startBaselines, WARMUP_SECONDS, wrkLoad, type Pids, type Row } from "./load.js";
import { ADMIN_TOKEN, childPids, peakRssMb, startService } from "./service.js";

const GRPC_WORKERS = Number(process.env.BENCH_GRPC_WORKERS ?? 1);
/** Every case runs once per round, the rounds one after the other; the table shows each case's median round. */
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));

async function cannon(name: string, pids: Pids, opts: autocannon.Options): Promise<Row> {
  await autocannon({ ...opts, connections: CONNECTIONS, duration: WARMUP_SECONDS });
  const start = cpuMark(pids);
  const r = await autocannon({ ...opts, connections: CONNECTIONS, duration: SECONDS });
  const cpu = cpuPerRequest(start, cpuMark(pids), r.requests.total);
  return { name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.timeouts + r.non2xx, ...cpu };
}

/** Which layer of grpc-js a gRPC load worker calls through (see GRPC_WORKER). */
type GrpcApi = "channel" | "client";

/**
 * The grpc-js client of one load worker (plain CommonJS, run with `eval`): `concurrency` calls in flight at all
 * times over `channels` channels; the reply is not decoded (autocannon does not parse either). It warms up for
 * `warmupSeconds` on the same channels (a worker is an isolate of its own: a warm-up in another worker would
 * leave this one's grpc-js code cold), posts "measuring", then measures for `seconds`.
 *
 * `api` is which layer of grpc-js makes the calls:
 * - "channel": `Channel.createCall` with a listener, what grpc-js's own Client does underneath. The call goes
 *   through the same channel, filters (deadline, compression), load balancer, subchannel and HTTP/2 transport;
 *   it skips the Client layer's per-call extras: an argument check, the interceptor chain built anew for every
 *   call, a `ClientUnaryCallImpl` event emitter, and an `Error` made on every call to keep the caller's stack
 *   for a failure. Measured at 20–35 µs less client CPU per call on this machine. It is the lean client, as
 *   autocannon is for HTTP/1.1, and the row the "gRPC >= REST" target is checked on.
 * - "client": `Client.makeUnaryRequest`, what generated stubs call; shown beside it.
 */
const GRPC_WORKER = `
const { parentPort, workerData } = require("node:worker_threads");
const grpc = require(workerData.grpcPath);
const { target, key, warmupSeconds, seconds, channels, concurrency, api } = workerData;
const options = { "grpc.use_local_subchannel_pool": 1 };
const path = "/scheduling.v1.UserService/GetUser";
const md = new grpc.Metadata();
md.set("x-api-key", key);
const empty = Buffer.alloc(0);
let errors = 0;
const viaClient = (client) => new Promise((resolve) => {
  client.makeUnaryRequest(path, (b) => b, (b) => b, empty, md, (err) => {
    if (err) errors++;
    resolve();
  });
});
// One call as Client.makeUnaryRequest makes it underneath: start with a copy of the metadata (the transport
// adds to it), send the message, half-close, read; it succeeded if the status is OK after one message.
const viaChannel = (channel) => new Promise((resolve) => {
  const call = channel.createCall(path, Infinity, undefined, null, 0);
  let messages = 0;
  call.start(md.clone(), {
    onReceiveMetadata() {},
    onReceiveMessage() {
      messages++;
      call.startRead();
    },
    onReceiveStatus(status) {
      if (status.code !== grpc.status.OK || messages !== 1) errors++;
      resolve();
    },
  });
  call.sendMessageWithContext({}, empty);
  call.halfClose();
  call.startRead();
});
const call = api === "channel" ? viaChannel : viaClient;
const peers = Array.from({ length: channels }, () =>
  api === "channel" ? new grpc.Channel(target, grpc.credentials.createInsecure(), options) : new grpc.Client(target, grpc.credentials.createInsecure(), options),
);
const phase = (secs, latencies) => {
  const end = performance.now() + secs * 1000;
  const loop = async (peer) => {
    while (performance.now() < end) {
      const t = performance.now();
      await call(peer);
      latencies.push(performance.now() - t);
    }
  };
  return Promise.all(Array.from({ length: concurrency }, (_, i) => loop(peers[i % peers.length])));
};
(async () => {
  await phase(warmupSeconds, []);
  errors = 0;
  parentPort.postMessage({ measuring: true });
  const latencies = [];
  const t0 = performance.now();
  await phase(seconds, latencies);
  const elapsed = (performance.now() - t0) / 1000;
  for (const peer of peers) peer.close();
  parentPort.postMessage({ latencies: Float64Array.from(latencies), errors, elapsed });
})();
`;

/**
 * gRPC GetUser with @grpc/grpc-js: CONNECTIONS calls in flight over GRPC_CHANNELS channels, spread over
 * GRPC_WORKERS threads (default 1: on two cores more client threads only take CPU from the service). CPU of the
 * serving process is counted from the moment every worker has finished its warm-up.
 */
async function grpcLoad(name: string, pids: Pids, target: string, key: string, api: GrpcApi): Promise<Row> {
  const grpcPath = createRequire(import.meta.url).resolve("@grpc/grpc-js");
  let warming = GRPC_WORKERS;
  let start = { server: NaN, db: NaN, client: NaN };
  const runs = await Promise.all(
    Array.from(
      { length: GRPC_WORKERS },
      () =>
        new Promise<{ latencies: Float64Array; errors: number; elapsed: number }>((resolve, reject) => {
          const w = new Worker(GRPC_WORKER, {
            eval: true,
            workerData: {
              grpcPath,
              target,
              key,
              warmupSeconds: WARMUP_SECONDS,
              seconds: SECONDS,
              channels: Math.max(1, Math.round(GRPC_CHANNELS / GRPC_WORKERS)),
              concurrency: CONNECTIONS / GRPC_WORKERS,
              api,
            },
          });
          w.on("message", (m: { measuring?: true; latencies?: Float64Array; errors?: number; elapsed?: number }) => {
            if (m.measuring) {
              if (--warming === 0) start = cpuMark(pids);
            } else resolve(m as { latencies: Float64Array; errors: number; elapsed: number });
          });
          w.once("error", reject);
        }),
    ),
  );
  const end = cpuMark(pids);
  const latencies = runs.flatMap((r) => Array.from(r.latencies)).sort((a, b) => a - b);
  const elapsed = Math.max(...runs.map((r) => r.elapsed));
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  const total = latencies.length;
  return {
    name,
    rps: total / elapsed,
    p50: at(0.5),
    p99: at(0.99),
    errors: runs.reduce((n, r) => n + r.errors, 0),
    ...cpuPerRequest(start, end, total),
  };
}

/** The bytes of one answer's body as they come over the wire (compressed, when the answer is). */
function bodyBytes(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        let n = 0;
        res.on("data", (c: Buffer) => (n += c.byteLength));
        res.on("end", () => resolve(n));
        res.on("error", reject);
      })
      .on("error", reject);
  });
}

async function main(): Promise<void> {
  const machineLine = machine();
  const baselines = await startBaselines();
  const service = await startService();
  const base = `http://127.0.0.1:${service.port}`;
  // The compression rows run on a service of their own: the event page under load takes far more memory than GET
  // /user (about 450 MB of RSS at 50 connections, compressed or not), which would hide the RSS target's figure.
  // The page is public: its per-address limit is set out of reach, as the per-key one is (bench/service.ts).
  const pageService = await startService({ RATE_LIMIT_PUBLIC_PER_IP: "1000000000" });
  const pageBase = `http://127.0.0.1:${pageService.port}`;
  try {
    const created = await fetch(`${base}/api/v1/admin/accounts`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-admin-token": ADMIN_TOKEN },
      body: JSON.stringify({ account: { email: `bench-${Date.now()}@example.com`, full_name: "Bench Mark" } }),
    });
    const key = ((await created.json()) as { data: { api_key: string } }).data.api_key;
    // Compression rows: a list of 8 events (about 6 KB of JSON) and one event's booking page.
    const pageAccount = (
      (await (
        await fetch(`${pageBase}/api/v1/admin/accounts`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-admin-token": ADMIN_TOKEN },
          body: JSON.stringify({ account: { email: `bench-${Date.now()}@example.com`, full_name: "Bench Mark" } }),
        })
      ).json()) as { data: { api_key: string; url: string } }
    ).data;
    const pageKey = pageAccount.api_key;
    let eventUrl = "";
    for (let i = 0; i < 8; i++) {
      const made = await fetch(`${pageBase}/api/v1/events`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": pageKey },
        body: JSON.stringify({ event: { name: `Bench meeting ${i}`, url: `bench-${i}`, description: "Thirty minutes to go through your questions." } }),
      });
      if (made.status !== 201) throw new Error(`event ${i}: ${made.status}`);
      eventUrl = `bench-${i}`;
    }
    const listUrl = `${pageBase}/api/v1/events`;
    const pageUrl = `${pageBase}/${encodeURIComponent(pageAccount.url)}/${eventUrl}`;

    const baselinePids = { server: baselines.child.pid };
    const servicePids = { server: service.child.pid, db: childPids(service.child.pid!)[0] };
    const pagePids = { server: pageService.child.pid, db: childPids(pageService.child.pid!)[0] };
    const cases: Array<() => Promise<Row>> = [
      () => cannon("bare node:http JSON", baselinePids, { url: `http://127.0.0.1:${baselines.barePort}/` }),
      () => cannon("bare Express 5 route", baselinePids, { url: `http://127.0.0.1:${baselines.expressPort}/api/v1/user` }),
      () => cannon("REST GET /api/v1/user", servicePids, { url: `${base}/api/v1/user`, headers: { "x-api-key": key } }),
      () =>
        cannon("Connect GetUser (JSON, HTTP/1.1)", servicePids, {
          url: `${base}/scheduling.v1.UserService/GetUser`,
          method: "POST",
          headers: { "x-api-key": key, "content-type": "application/json" },
          body: "{}",
        }),
      () => grpcLoad(`gRPC GetUser (grpc-js Channel, ${GRPC_CHANNELS} channels, ${GRPC_WORKERS === 1 ? "1 thread" : `${GRPC_WORKERS} threads`})`, servicePids, `127.0.0.1:${service.port}`, key, "channel"),
      () => grpcLoad(`gRPC GetUser (grpc-js Client.makeUnaryRequest, same)`, servicePids, `127.0.0.1:${service.port}`, key, "client"),
      () => grpcLoad("reference: bare grpc-js server, fixed reply (Channel)", baselinePids, `127.0.0.1:${baselines.grpcPort}`, key, "channel"),
      // The same, with load generators in C that cost the shared cores far less per request than autocannon and
      // grpc-js: these rows measure the service rather than the client.
      () => wrkLoad("wrk: bare node:http JSON", baselinePids, `http://127.0.0.1:${baselines.barePort}/`),
      () => wrkLoad("wrk: bare Express 5 route", baselinePids, `http://127.0.0.1:${baselines.expressPort}/api/v1/user`),
      () => wrkLoad("wrk: REST GET /api/v1/user", servicePids, `${base}/api/v1/user`, { "x-api-key": key }),
      () => h2loadGrpc("h2load: bare node:http2 gRPC reply", baselinePids, `127.0.0.1:${baselines.bareGrpcPort}`, key),
      () => h2loadGrpc("h2load: gRPC GetUser", servicePids, `127.0.0.1:${service.port}`, key),
      // Compression (extensions.md "Answers on the wire"): the same answers plain and compressed, so the rows'
      // server CPU per request differ by what compressing costs.
      () => wrkLoad("wrk: REST GET /api/v1/events (8 events)", pagePids, listUrl, { "x-api-key": pageKey }),
      () => wrkLoad("wrk: same, Accept-Encoding: gzip", pagePids, listUrl, { "x-api-key": pageKey, "accept-encoding": "gzip" }),
      () => wrkLoad("wrk: same, Accept-Encoding: br", pagePids, listUrl, { "x-api-key": pageKey, "accept-encoding": "br" }),
      () => wrkLoad("wrk: event page GET /<user>/<event>", pagePids, pageUrl),
      () => wrkLoad("wrk: same, Accept-Encoding: gzip", pagePids, pageUrl, { "accept-encoding": "gzip" }),
    ];
    /** Where each case stands in `cases` (and so in every round). */
    const at = {
      express: 1, rest: 2, connect: 3, grpc: 4, grpcClient: 5, reference: 6, wrkBare: 7, wrkExpress: 8, wrkRest: 9, h2Bare: 10, h2Grpc: 11,
      list: 12, listGzip: 13, listBr: 14, page: 15, pageGzip: 16,
    } as const;
    // Rounds rather than one long case each: this VM's speed drifts by ±5–10% within minutes, and a drift
    // during one case would tilt every ratio to it. Each case's median round is shown, its errors summed.
    const rounds: Row[][] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const round: Row[] = [];
      for (const run of cases) round.push(await run());
      rounds.push(round);
    }
    const rows = cases.map((_, i) => {
      const sorted = rounds.map((round) => round[i]).sort((a, b) => a.rps - b.rps);
      return { ...sorted[Math.floor((sorted.length - 1) / 2)], errors: sorted.reduce((n, row) => n + row.errors, 0) };
    });

    const dbPid = childPids(service.child.pid!)[0];
    const rss = peakRssMb(service.child.pid!);
    const dbRss = dbPid === undefined ? NaN : peakRssMb(dbPid);
    const express = rows[at.express].rps;
    const lines = [
      `| case | requests/s | p50 ms | p99 ms | vs bare Express | server CPU µs/req | DB CPU µs/req | client CPU µs/req | errors |`,
      `|---|---:|---:|---:|---:|---:|---:|---:|---:|`,
      ...rows.map(
        (r) =>
          `| ${r.name} | ${fmt(r.rps)} | ${fmt(r.p50, 1)} | ${fmt(r.p99, 1)} | ${fmt((100 * r.rps) / express)}% | ${fmt(r.cpuUs)} | ${Number.isNaN(r.dbCpuUs) ? "–" : fmt(r.dbCpuUs)} | ${fmt(r.clientCpuUs)} | ${r.errors} |`,
      ),
    ];
    console.log(`machine: ${machineLine}`);
    console.log(
      `service: ${service.command}; embedded database; ${CONNECTIONS} connections, ${SECONDS} s per case after ${WARMUP_SECONDS} s warm-up; median of ${ROUNDS} rounds`,
    );
    console.log(lines.join("\n"));
    console.log(
      `\n| round | bare Express | REST | Connect | gRPC (Channel) | gRPC ÷ REST | gRPC (Client) | gRPC (Client) ÷ REST | reference |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|`,
    );
    rounds.forEach((round, r) => {
      const pct = (row: Row) => `${fmt(row.rps)} (${fmt((100 * row.rps) / round[at.express].rps)}%)`;
      const ofRest = (row: Row) => `${fmt((100 * row.rps) / round[at.rest].rps, 1)}%`;
      console.log(
        `| ${r + 1} | ${fmt(round[at.express].rps)} | ${pct(round[at.rest])} | ${pct(round[at.connect])} | ${pct(round[at.grpc])} | ${ofRest(round[at.grpc])} | ${pct(round[at.grpcClient])} | ${ofRest(round[at.grpcClient])} | ${pct(round[at.reference])} |`,
      );
    });
    console.log(
      `\n| round | wrk bare node:http | wrk bare Express | wrk REST | REST ÷ Express | h2load bare HTTP/2 gRPC | h2load gRPC GetUser | gRPC ÷ REST |\n|---|---:|---:|---:|---:|---:|---:|---:|`,
    );
    rounds.forEach((round, r) => {
      const rps = (i: number) => fmt(round[i].rps);
      const ratio = (a: number, b: number) => `${fmt((100 * round[a].rps) / round[b].rps, 1)}%`;
      console.log(
        `| ${r + 1} | ${rps(at.wrkBare)} | ${rps(at.wrkExpress)} | ${rps(at.wrkRest)} | ${ratio(at.wrkRest, at.wrkExpress)} | ${rps(at.h2Bare)} | ${rps(at.h2Grpc)} | ${ratio(at.h2Grpc, at.wrkRest)} |`,
      );
    });
    const sizes = await Promise.all(
      [
        [listUrl, { "x-api-key": pageKey }],
        [pageUrl, {}],
      ].flatMap(([url, headers]) => ["identity", "gzip", "br"].map((coding) => bodyBytes(url as string, { ...(headers as Record<string, string>), "accept-encoding": coding }))),
    );
    const extra = (plain: number, packed: number) => `${fmt(rows[packed].cpuUs - rows[plain].cpuUs)} µs (${fmt((100 * rows[packed].rps) / rows[plain].rps)}% of the plain requests/s)`;
    console.log(
      `\ncompression: GET /api/v1/events ${fmt(sizes[0])} B plain, ${fmt(sizes[1])} B gzip, ${fmt(sizes[2])} B br; ` +
        `event page ${fmt(sizes[3])} B plain, ${fmt(sizes[4])} B gzip, ${fmt(sizes[5])} B br`,
    );
    console.log(`info    server CPU per request added by compressing: list gzip ${extra(at.list, at.listGzip)}, list br ${extra(at.list, at.listBr)}, page gzip ${extra(at.page, at.pageGzip)}`);
    console.log(`info    peak RSS of the compression rows' service (the event page under load): ${fmt(peakRssMb(pageService.child.pid!), 1)} MB`);
    console.log("");
    console.log(`start-up to /healthz 200: ${fmt(service.startupMs)} ms (embedded database included)`);
    console.log(`peak RSS of the service process: ${fmt(rss, 1)} MB; of the embedded database process: ${fmt(dbRss, 1)} MB`);
    const rest = rows[at.rest].rps;
    const targets = [
      [`REST >= 60% of bare Express`, rest >= 0.6 * express],
      [`Connect >= REST`, rows[at.connect].rps >= rest],
      [`gRPC >= REST (grpc-js Channel load loop)`, rows[at.grpc].rps >= rest],
      // Within each round, so drift of this VM between rounds cannot tilt them; met when met in the median round.
      [`REST >= 75% of bare Express (wrk, the median round)`, median(rounds.map((round) => round[at.wrkRest].rps / round[at.wrkExpress].rps)) >= 0.75],
      [`gRPC GetUser (h2load) >= REST GET /user (wrk), the median round`, median(rounds.map((round) => round[at.h2Grpc].rps / round[at.wrkRest].rps)) >= 1],
      [`start-up <= 2 s`, service.startupMs <= 2000],
      [`RSS <= 250 MB`, rss <= 250],
      [`no errors`, rows.every((r) => r.errors === 0)],
    ] as const;
    for (const [what, ok] of targets) console.log(`${ok ? "met    " : "MISSED "} ${what}`);
    // Not targets. The same service through grpc-js's Client layer, whose per-call cost lands on the same cores;
    // and what each protocol costs the service itself, which does not depend on the load generator.
    const ratio = (a: number, b: number) => `${fmt((100 * a) / b, 1)}%`;
    console.log(`info    gRPC through Client.makeUnaryRequest: ${ratio(rows[at.grpcClient].rps, rest)} of REST's requests/s`);
    console.log(
      `info    server CPU per request: gRPC ${fmt(rows[at.grpc].cpuUs)} µs, Connect ${fmt(rows[at.connect].cpuUs)} µs, REST ${fmt(rows[at.rest].cpuUs)} µs (gRPC ${ratio(rows[at.grpc].cpuUs, rows[at.rest].cpuUs)} of REST's)`,
    );
    console.log(
      `info    load generator CPU per request: grpc-js Channel ${fmt(rows[at.grpc].clientCpuUs)} µs, Client ${fmt(rows[at.grpcClient].clientCpuUs)} µs, autocannon (REST) ${fmt(rows[at.rest].clientCpuUs)} µs`,
    );
  } finally {
    service.child.kill("SIGTERM");
    pageService.child.kill("SIGTERM");
    baselines.child.kill("SIGTERM");
  }
}

await main();
