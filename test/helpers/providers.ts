// A server of the test's own wired to the fake Google, Microsoft and Zoom (and its own database, for looking at what is stored), plus the OAuth steps a host's browser takes.
import mongoose from "mongoose";
import { expect } from "vitest";
import { startFakeGoogle, type FakeGoogle } from "../fakes/google.js";
import { startFakeMicrosoft, type FakeMicrosoft } from "../fakes/microsoft.js";
import { startFakeZoom, type FakeZoom } from "../fakes/zoom.js";
import { restAt, type Json } from "./api.js";
import { hostAt } from "./calendars.js";
import { startDbProxy, type DbProxy } from "./dbProxy.js";
import { freePort, startDatabase, type TestDatabase } from "./jongodb.js";
import { startServer, type RunningServer } from "./server.js";

export interface ProviderWorld {
  base: string;
  server: RunningServer;
  google: FakeGoogle;
  microsoft: FakeMicrosoft;
  zoom: FakeZoom;
  db: TestDatabase;
  /** The server's database, read and written directly (sealed tokens, a state's expiry). */
  mongo: mongoose.mongo.Db;
  /** Between `server` and its database when the world was started `proxied`: a fault or a held write of that server. */
  proxy?: DbProxy;
  /** Another replica of the service: the same fakes and settings (and `env` besides), on the database directly. */
  replica(env?: Record<string, string>): Promise<RunningServer>;
  stop(): Promise<void>;
}

/** Fakes first (they must know the redirect URIs), then the database and the server on the port the URIs name. */
export async function startProviderWorld(
  env: Record<string, string> = {},
  fakes: { googleTokenTtlSeconds?: number; googleConference?: "success" | "pending" | "failure" } = {},
  { proxied = false }: { proxied?: boolean } = {},
): Promise<ProviderWorld> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const google = await startFakeGoogle({ redirectUris: [`${base}/oauth/google/callback`], accessTokenTtlSeconds: fakes.googleTokenTtlSeconds, conference: fakes.googleConference });
  const zoom = await startFakeZoom({ redirectUris: [`${base}/oauth/zoom/callback`] });
  const microsoft = await startFakeMicrosoft({ redirectUris: [`${base}/oauth/microsoft/callback`] });
  const db = await startDatabase();
  const proxy = proxied ? await startDbProxy(db.uri) : undefined;
  const settings = {
    APP_URL: base,
    MONGODB_URI: db.uri,
    OUTBOUND_ALLOW_PRIVATE: "true",
    EFFECTS_POLL_MS: "100",
    EFFECTS_RETRY_SCALE: "0.001",
    ...google.env(),
    ...zoom.env(),
    ...microsoft.env(),
    ...env,
  };
  const server = await startServer({ ...settings, PORT: String(port), ...(proxy ? { MONGODB_URI: proxy.uri } : {}) });
  const replicas: RunningServer[] = [];
  const client = new mongoose.mongo.MongoClient(db.uri);
  await client.connect();
  return {
    base,
    server,
    google,
    microsoft,
    zoom,
    db,
    mongo: client.db(),
    proxy,
    async replica(more = {}) {
      const started = await startServer({ ...settings, ...more });
      replicas.push(started);
      return started;
    },
    async stop() {
      await Promise.all([server.stop(), ...replicas.map((r) => r.stop())]);
      await client.close();
      await proxy?.close();
      await Promise.all([google.close(), microsoft.close(), zoom.close(), db.kill()]);
    },
  };
}

/** POST /oauth/<provider>/authorize; the whole answer. */
export function authorize(base: string, key: string, provider: string, authorization: Json): ReturnType<typeof restAt<Json>> {
  return restAt<Json>(base, "POST", `/api/v1/oauth/${provider}/authorize`, { key, body: { authorization } });
}

/** What a browser gets from the callback, without following a redirect. */
export interface Visit {
  status: number;
  location: string | null;
  text: string;
}

/** The browser's arrival at the callback: the answer as fetch sees it without following the redirect. */
export async function visit(url: string): Promise<Visit> {
  const res = await fetch(url, { redirect: "manual" });
  return { status: res.status, location: res.headers.get("location"), text: await res.text() };
}

/** The person's answer to the callback page's question, posted as its form posts it (to the page's own address). */
export async function answer(callbackUrl: string, page: Visit, decision: "confirm" | "decline"): Promise<Visit> {
  const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(page.text)?.[1];
  const url = new URL(callbackUrl);
  const res = await fetch(`${url.origin}${url.pathname}`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ state: field("state") ?? "", confirmation: field("confirmation") ?? "", decision }),
  });
  return { status: res.status, location: res.headers.get("location"), text: await res.text() };
}

/** The callback, then (when it asks) the answer: what the person who approved ends up seeing. */
export async function finish(callbackUrl: string, decision: "confirm" | "decline" = "confirm"): Promise<Visit> {
  const page = await visit(callbackUrl);
  if (page.status !== 200 || !page.text.includes('name="confirmation"')) return page;
  return answer(callbackUrl, page, decision);
}

/** Authorizes `provider` for `purpose` as `user` (at the fake's consent step) and lands on the callback; expects success. */
export async function connectThroughOAuth(w: ProviderWorld, key: string, provider: "google" | "microsoft" | "zoom", user: string, purpose = provider === "zoom" ? "conference" : "calendar"): Promise<void> {
  const started = await authorize(w.base, key, provider, { purpose });
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  const fake = provider === "google" ? w.google : provider === "microsoft" ? w.microsoft : w.zoom;
  const landed = await finish(fake.approve(started.body.data.authorization_url, { user }));
  expect(landed.status, landed.text).toBe(200);
  expect(landed.text).toContain("connected");
}

/** A host on the world's server with a Google account connected; its connection as the API lists it. */
export async function hostWithGoogle(w: ProviderWorld, email: string): Promise<{ key: string; user: Json; connection: Json }> {
  if (!w.google.oauth.user(email)) w.google.addUser(email);
  const host = await hostAt(w.base);
  await connectThroughOAuth(w, host.key, "google", email);
  const list = await restAt(w.base, "GET", "/api/v1/calendar_connections", { key: host.key });
  const connection = (list.body.data as Json[]).find((c) => c.provider === "google" && c.account === email);
  expect(connection).toBeDefined();
  return { ...host, connection };
}

/** A host on the world's server with the Microsoft account `user` (an id or address of the fake's) connected; its connection as the API lists it. */
export async function hostWithMicrosoft(w: ProviderWorld, user: string): Promise<{ key: string; user: Json; connection: Json }> {
  const host = await hostAt(w.base);
  await connectThroughOAuth(w, host.key, "microsoft", user);
  const list = await restAt(w.base, "GET", "/api/v1/calendar_connections", { key: host.key });
  const connection = (list.body.data as Json[]).find((c) => c.provider === "microsoft");
  expect(connection).toBeDefined();
  return { ...host, connection };
}

/** The host's record of a booking (GET /events/<id>/bookings), in the category given. */
export async function recordOf(base: string, key: string, eventId: string, bookingId: string, category = "upcoming"): Promise<Json | undefined> {
  const res = await restAt(base, "GET", `/api/v1/events/${eventId}/bookings?category=${category}`, { key });
  return (res.body.data.records as Json[]).find((r) => r.id === bookingId);
}
