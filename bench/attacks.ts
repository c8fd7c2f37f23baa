// The attacks of issues 14 and 25 re-run against the service: whether they raise its peak RSS after normal load, descriptors after half-open floods, time to 503 with the database frozen, one account's hanging webhooks against another's deliveries.
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { readFileSync, readdirSync } from "node:fs";
import autocannon from "autocannon";
import { ADMIN_TOKEN, childPids, peakRssMb, startService } from "./service.js";
import { tenantFairness } from "./fairness.js";

const MB = 1024 * 1024;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : NaN;
}

const descriptors = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });

async function newKey(port: number): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/api/v1/admin/accounts`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-admin-token": ADMIN_TOKEN },
    body: JSON.stringify({ account: { email: `attacks-${Date.now()}@example.com`, full_name: "Bench Attacks" } }),
  });
  return ((await res.json()) as { data: { api_key: string } }).data.api_key;
}

function tally(statuses: Array<string | number>): string {
  const counts = new Map<string, number>();
  for (const s of statuses) counts.set(String(s), (counts.get(String(s)) ?? 0) + 1);
  return [...counts].map(([s, n]) => `${n}× ${s}`).join(", ");
}

/** 30 picture uploads with a bad key, each five 5 MB files (what took RSS from 175 to 397 MB). */
async function multipartFlood(port: number): Promise<string> {
  const boundary = "----bench";
  const file = Buffer.alloc(5 * MB, 0x61);
  const parts: Buffer[] = [];
  for (let i = 0; i < 5; i++) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="user[profile_picture]"; filename="${i}.png"\r\nContent-Type: image/png\r\n\r\n`), file, Buffer.from("\r\n"));
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  const body = Buffer.concat(parts);
  const one = () =>
    new Promise<number | string>((resolve) => {
      const req = http.request(
        { host: "127.0.0.1", port, method: "PUT", path: "/api/v1/users/profile_picture", agent: false, headers: { "x-api-key": "not-a-key", "content-type": `multipart/form-data; boundary=${boundary}`, "content-length": body.length } },
        (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        },
      );
      req.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? "error"));
      req.end(body);
    });
  return tally(await Promise.all(Array.from({ length: 30 }, one)));
}

/** `count` gRPC streams on one connection, each announcing `announced` bytes and sending `send` of them. */
async function grpcFlood(port: number, path: string, headers: Record<string, string>, count: number, announced: number, send: number): Promise<string> {
  // The client's own session memory cap (10 MB by default) would refuse its streams before the service sees them.
  const session = http2.connect(`http://127.0.0.1:${port}`, { maxSessionMemory: 2048 });
  session.on("error", () => {});
  const payload = Buffer.alloc(send, 0x61);
  const one = () =>
    new Promise<string>((resolve) => {
      const stream = session.request({ ":method": "POST", ":path": path, "content-type": "application/grpc", te: "trailers", ...headers });
      let status = "no status";
      const grab = (h: http2.IncomingHttpHeaders) => {
        if (h["grpc-status"] !== undefined) status = `grpc-status ${String(h["grpc-status"])}`;
      };
      stream.on("response", grab);
      stream.on("trailers", grab);
      stream.on("error", () => {});
      stream.resume();
      stream.on("close", () => resolve(stream.rstCode ? `${status} (RST ${stream.rstCode})` : status));
      const prefix = Buffer.alloc(5);
      prefix.writeUInt32BE(announced, 1);
      stream.write(prefix);
      if (send > 0) stream.end(payload);
      // Nothing more is ever sent for the 4 GB message: the service must close the stream itself.
      setTimeout(() => stream.close(), 20_000).unref();
    });
  const out = tally(await Promise.all(Array.from({ length: count }, one)));
  session.destroy();
  return out;
}

/** Connections that send a request node:http cannot parse and never close their side (the FIN-WAIT-2 flood). */
async function halfOpenFlood(port: number, count: number): Promise<net.Socket[]> {
  const sockets: net.Socket[] = [];
  for (let i = 0; i < count; i += 200) {
    await Promise.all(
      Array.from({ length: Math.min(200, count - i) }, () =>
        new Promise<void>((resolve) => {
          const s = net.connect({ port, host: "127.0.0.1", allowHalfOpen: true });
          sockets.push(s);
          s.on("error", () => resolve());
          s.once("data", () => resolve());
          s.once("connect", () => s.write("BROKEN\r\n\r\n"));
        }),
      ),
    );
  }
  return sockets;
}

async function timedStatus(url: string, key: string): Promise<{ status: number | string; ms: number }> {
  const t0 = performance.now();
  try {
    const res = await fetch(url, { headers: { "x-api-key": key }, signal: AbortSignal.timeout(30_000) });
    await res.arrayBuffer();
    return { status: res.status, ms: performance.now() - t0 };
  } catch (err) {
    return { status: err instanceof Error ? err.name : "error", ms: performance.now() - t0 };
  }
}

async function main(): Promise<void> {
  const service = await startService();
  const pid = service.child.pid!;
  const port = service.port;
  const rows: string[] = [];
  try {
    const key = await newKey(port);
    await sleep(500);
    const start = rssMb(pid);
    // Normal use first, in the same process: its peak is the bar, and the attacks then meet a warmed-up service
    // (a fresh process grows by tens of MB on its first requests of any kind, which would count as the attack's).
    await autocannon({ url: `http://127.0.0.1:${port}/api/v1/user`, headers: { "x-api-key": key }, connections: 50, duration: SECONDS });
    const normal = peakRssMb(pid);
    const afterNormal = rssMb(pid);
    console.error(`normal peak ${fmt(normal, 1)} MB`);
    const row = (attack: string, answers: string) => {
      rows.push(`| ${attack} | ${answers} | ${fmt(rssMb(pid), 1)} | ${fmt(peakRssMb(pid), 1)} |`);
      console.error(rows[rows.length - 1]);
    };
    row("30 REST picture uploads, bad key, 5 × 5 MB files each", await multipartFlood(port));
    row("50 gRPC streams on one connection, bad key, 6 MB message each", await grpcFlood(port, "/scheduling.v1.UserService/UpdateUser", { "x-api-key": "not-a-key" }, 50, 6 * MB - 5, 6 * MB - 5));
    row("50 gRPC streams, no key needed (CreateBooking), 6 MB each", await grpcFlood(port, "/scheduling.v1.PublicBookingService/CreateBooking", {}, 50, 6 * MB - 5, 6 * MB - 5));
    row("50 gRPC streams with a valid key and a deadline (Connect's path), 6 MB each", await grpcFlood(port, "/scheduling.v1.UserService/UpdateUser", { "x-api-key": key, "grpc-timeout": "5S" }, 50, 6 * MB - 5, 6 * MB - 5));
    row("50 gRPC streams announcing 4 GB, 5 bytes sent", await grpcFlood(port, "/scheduling.v1.UserService/UpdateUser", { "x-api-key": key }, 50, 0xffffffff, 0));

    // The memory attacks' bar, before the half-open flood: 19 500 connections held open cost their sockets'
    // objects whatever the service does with them (bounded by MAX_CONNECTIONS), reported on their own below.
    const peakAttacks = peakRssMb(pid);
    const limit = Number(/^Max open files\s+(\d+)/m.exec(readFileSync("/proc/self/limits", "utf8"))?.[1] ?? 1024);
    const flood = Math.min(10_500, Math.floor((limit - 500) / 2));
    const fdBefore = descriptors(pid);
    const held = [...(await halfOpenFlood(port, flood)), ...(await halfOpenFlood(port, flood))];
    await sleep(3000);
    const fdAfter = descriptors(pid);
    const health = await timedStatus(`http://127.0.0.1:${port}/healthz`, key);
    for (const s of held) s.destroy();
    const peak = peakRssMb(pid);

    // The database frozen: the embedded jongodb is the service's child.
    const db = childPids(pid).find((p) => readFileSync(`/proc/${p}/comm`, "utf8").startsWith("jongodb"));
    if (db === undefined) throw new Error("no embedded database process found");
    process.kill(db, "SIGSTOP");
    const stalls: Array<{ status: number | string; ms: number }> = [];
    for (let i = 0; i < 10; i++) {
      stalls.push(await timedStatus(`http://127.0.0.1:${port}/api/v1/events`, key));
      await sleep(500);
    }
    process.kill(db, "SIGCONT");
    await sleep(2000);
    const recovered = await timedStatus(`http://127.0.0.1:${port}/api/v1/events`, key);
    process.kill(db, "SIGSTOP");
    const inFlight = timedStatus(`http://127.0.0.1:${port}/api/v1/events`, key);
    await sleep(100);
    const t0 = performance.now();
    const exited = new Promise<number | null>((resolve) => service.child.once("exit", (code) => resolve(code)));
    service.child.kill("SIGTERM");
    const code = await exited;
    const exitMs = performance.now() - t0;
    await inFlight;
    try {
      process.kill(db, "SIGCONT");
    } catch {
      // gone with the service, as it should be
    }

    console.log(`service: ${service.command}; normal load first, same process: autocannon GET /api/v1/user, 50 connections, ${SECONDS} s`);
    console.log(`\n| attack (one after the other, same process) | answers | RSS after, MB | peak RSS so far, MB |\n|---|---|---:|---:|`);
    console.log(rows.join("\n"));
    console.log(
      `\nRSS at start ${fmt(start, 1)} MB; peak under normal load ${fmt(normal, 1)} MB (RSS after it ${fmt(afterNormal, 1)} MB); peak after the attacks above ${fmt(peakAttacks, 1)} MB; after the half-open flood below ${fmt(peak, 1)} MB`,
    );
    console.log(`${peakAttacks <= normal ? "met    " : "MISSED "} the attacks above do not raise the peak RSS above the normal peak`);
    console.log(
      `half-open 400 flood: 2 × ${fmt(flood)} connections that never close; service descriptors ${fdBefore} before, ${fdAfter} 3 s after; /healthz during it: ${health.status} in ${fmt(health.ms)} ms`,
    );
    const ms = stalls.map((s) => s.ms).sort((a, b) => a - b);
    console.log(
      `database frozen (SIGSTOP): ${tally(stalls.map((s) => s.status))}; time to answer median ${fmt(ms[Math.floor(ms.length / 2)])} ms, max ${fmt(ms[ms.length - 1])} ms (in order: ${stalls.map((s) => fmt(s.ms)).join(", ")})`,
    );
    console.log(`after SIGCONT: ${recovered.status} in ${fmt(recovered.ms)} ms`);
    const inFlightAtStop = /"msg":"shutting down".*?"in_flight":(\d+)/.exec(service.logs())?.[1] ?? "?";
    console.log(`SIGTERM with the database frozen and a request in flight: exit ${code} after ${fmt(exitMs)} ms (${inFlightAtStop} in flight at the signal)`);
  } finally {
    if (service.child.exitCode === null) service.child.kill("SIGKILL");
  }
}

/** `npm run bench:attacks -- fairness` runs only the tenant-fairness case (its own service); no argument runs all. */
const only = process.argv.slice(2);
if (only.length === 0 || only.includes("memory")) await main();
if (only.length === 0 || only.includes("fairness")) console.log(`\n${(await tenantFairness()).join("\n")}`);
