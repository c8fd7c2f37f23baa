// Radicale (Debian's /usr/bin/radicale) on a free loopback port for tests: temp storage, htpasswd users, calendars and events over plain fetch.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort } from "./jongodb.js";
import { until } from "./wait.js";

export interface Radicale {
  /** http://127.0.0.1:<port> */
  url: string;
  port: number;
  /** Creates a calendar collection of `user` (MKCALENDAR); returns its URL. */
  mkcalendar(user: string, name: string, displayName?: string): Promise<string>;
  /** Puts an iCalendar object into a collection (PUT). */
  put(user: string, calendarUrl: string, filename: string, ics: string): Promise<void>;
  /** GET of an object or collection, as `user`. */
  get(user: string, url: string): Promise<{ status: number; body: string }>;
  stop(): Promise<void>;
  /** Starts it again on the same port with the same storage. */
  start(): Promise<void>;
  /** Stops it and removes its storage. */
  dispose(): Promise<void>;
  /** Changes a user's password (the htpasswd file is read on every login). */
  setPassword(user: string, password: string): Promise<void>;
}

/** Whether something accepts connections on the port right now. */
function listeningOn(port: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const sock = net.connect(port, "127.0.0.1");
    sock.once("connect", () => {
      sock.destroy();
      resolve(true);
    });
    sock.once("error", () => resolve(false));
  });
}

/** Starts Radicale with these users (name -> password, stored in plain htpasswd) and owner-only rights. */
export async function startRadicale(users: Record<string, string>): Promise<Radicale> {
  const dir = await mkdtemp(path.join(tmpdir(), "radicale-"));
  const port = await freePort();
  const writeUsers = () => writeFile(path.join(dir, "users"), Object.entries(users).map(([u, p]) => `${u}:${p}\n`).join(""));
  await writeUsers();
  await writeFile(
    path.join(dir, "config"),
    [
      "[server]", `hosts = 127.0.0.1:${port}`,
      // delay: Radicale holds a refused login for about a second, longer than the tests' 1 s read deadline, which
      // would turn "wrong password" into "no answer" by chance.
      "[auth]", "type = htpasswd", `htpasswd_filename = ${path.join(dir, "users")}`, "htpasswd_encryption = plain", "delay = 0",
      "[rights]", "type = owner_only",
      "[storage]", `filesystem_folder = ${path.join(dir, "collections")}`,
      "[web]", "type = none",
      "[logging]", "level = warning",
    ].join("\n"),
  );
  let child: ChildProcess | undefined;
  const url = `http://127.0.0.1:${port}`;
  const auth = (user: string) => `Basic ${Buffer.from(`${user}:${users[user]}`).toString("base64")}`;

  const start = async () => {
    child = spawn("radicale", ["--config", path.join(dir, "config")], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr?.on("data", (c: Buffer) => (stderr += c.toString()));
    try {
      await until(`radicale listening on ${port}`, () => listeningOn(port), { timeoutMs: 15_000, everyMs: 100 });
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${stderr}`);
    }
  };
  const stop = async () => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((r) => c.once("exit", r));
    c.kill("SIGTERM");
    await exited;
  };
  await start();

  return {
    url,
    port,
    async mkcalendar(user, name, displayName = name) {
      // A first request as the user makes Radicale create the user's principal collection.
      await fetch(`${url}/`, { method: "PROPFIND", headers: { authorization: auth(user), depth: "0" } }).then((r) => r.arrayBuffer());
      const calUrl = `${url}/${user}/${name}/`;
      const res = await fetch(calUrl, {
        method: "MKCALENDAR",
        headers: { authorization: auth(user), "content-type": "application/xml" },
        body: `<?xml version="1.0" encoding="utf-8"?><C:mkcalendar xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:set><D:prop><D:displayname>${displayName}</D:displayname></D:prop></D:set></C:mkcalendar>`,
      });
      await res.arrayBuffer();
      if (res.status !== 201) throw new Error(`MKCALENDAR ${calUrl}: ${res.status}`);
      return calUrl;
    },
    async put(user, calendarUrl, filename, ics) {
      const res = await fetch(`${calendarUrl}${filename}`, { method: "PUT", headers: { authorization: auth(user), "content-type": "text/calendar" }, body: ics });
      await res.arrayBuffer();
      if (res.status !== 201 && res.status !== 204) throw new Error(`PUT ${filename}: ${res.status}`);
    },
    async get(user, target) {
      const res = await fetch(target, { headers: { authorization: auth(user) } });
      return { status: res.status, body: await res.text() };
    },
    stop,
    start,
    async setPassword(user, password) {
      users[user] = password;
      await writeUsers();
    },
    async dispose() {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A TCP proxy in front of a peer whose behaviour a test can switch: `pass` forwards, `hang` accepts connections
 * and never answers (a dead server behind a live socket), `refuse` resets them.
 */
export interface SwitchProxy {
  port: number;
  url: string;
  mode: "pass" | "hang" | "refuse";
  /** Connections accepted in `hang` mode so far: a client is stuck once this grows. */
  held: number;
  close(): Promise<void>;
}

export async function startSwitchProxy(targetPort: number): Promise<SwitchProxy> {
  const sockets = new Set<net.Socket>();
  const proxy: SwitchProxy = { port: 0, url: "", mode: "pass", held: 0, close: async () => {} };
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    client.on("error", () => {});
    if (proxy.mode === "hang") {
      proxy.held++;
      return;
    }
    if (proxy.mode === "refuse") {
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect(targetPort, "127.0.0.1");
    sockets.add(upstream);
    upstream.on("close", () => sockets.delete(upstream));
    upstream.on("error", () => client.destroy());
    client.on("close", () => upstream.destroy());
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  proxy.port = (server.address() as net.AddressInfo).port;
  proxy.url = `http://127.0.0.1:${proxy.port}`;
  proxy.close = async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
  };
  return proxy;
}

/**
 * An HTTP proxy in front of a peer that a test can make misbehave: `pass` forwards, `error` answers 500,
 * `badxml` answers 207 with broken XML, `trickle` sends the headers and then a byte every 200 ms, never ending,
 * `lost` forwards the next PUT and answers 502 (the write happened, its answer did not arrive), then passes.
 * `seen` records every request's method, path and conditional headers. `rewrite`, when set, changes what the peer
 * answered before it is passed on (a calendar object broken on its way, which Radicale itself would refuse to store).
 */
export interface FaultProxy {
  url: string;
  mode: "pass" | "error" | "badxml" | "trickle" | "lost";
  rewrite: ((body: string) => string) | null;
  seen: { method: string; path: string; ifMatch?: string; ifNoneMatch?: string; status?: number }[];
  close(): Promise<void>;
}

export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const { default: http } = await import("node:http");
  const timers = new Set<NodeJS.Timeout>();
  const proxy: FaultProxy = { url: "", mode: "pass", rewrite: null, seen: [], close: async () => {} };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    const seen: FaultProxy["seen"][number] = { method: req.method ?? "", path: req.url ?? "" };
    if (typeof req.headers["if-match"] === "string") seen.ifMatch = req.headers["if-match"];
    if (typeof req.headers["if-none-match"] === "string") seen.ifNoneMatch = req.headers["if-none-match"];
    proxy.seen.push(seen);
    const lose = proxy.mode === "lost" && req.method === "PUT";
    if (lose) proxy.mode = "pass";
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (proxy.mode === "error") return res.writeHead(500).end("internal error");
      if (proxy.mode === "badxml") return res.writeHead(207, { "content-type": "application/xml" }).end("<?xml version='1.0'?><multistatus xmlns=\"DAV:\"><response><href>");
      if (proxy.mode === "trickle") {
        res.writeHead(207, { "content-type": "application/xml" });
        const t = setInterval(() => res.write(" "), 200);
        timers.add(t);
        res.on("close", () => clearInterval(t));
        return;
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string" && k !== "host" && k !== "connection") headers[k] = v;
      fetch(`${target}${req.url}`, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined, redirect: "manual" })
        .then(async (up) => {
          const raw = Buffer.from(await up.arrayBuffer());
          const body = proxy.rewrite ? Buffer.from(proxy.rewrite(raw.toString("utf8"))) : raw;
          seen.status = up.status;
          if (lose) return res.writeHead(502).end("bad gateway");
          const out: Record<string, string> = {};
          up.headers.forEach((v, k) => {
            if (k !== "content-encoding" && k !== "transfer-encoding" && k !== "content-length" && k !== "connection") out[k] = v;
          });
          res.writeHead(up.status, out).end(body);
        })
        .catch(() => res.writeHead(502).end());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  proxy.close = async () => {
    for (const t of timers) clearInterval(t);
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  };
  return proxy;
}
