// The operator command line (npm run admin): account creation and booking import through the admin RPCs, and its errors.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_TOKEN, baseUrl, rest } from "../helpers/api.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "admin-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * The CLI as one file, built once for the file's cases, as the run's servers are (test/helpers/server.ts): through
 * tsx each start loaded and transpiled its modules again, 0.9-1.2 s of CPU, against 0.15 s from the bundle, about 20
 * starts a run. The first case runs it as operators do, `npm run -s admin` (tsx), so that path stays tested.
 */
const bundle = join(dir, "admin.mjs");
beforeAll(async () => {
  await build({
    entryPoints: [join(ROOT, "scripts/admin.ts")],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    outfile: bundle,
    logLevel: "error",
    // The CommonJS packages inside call require() for Node's modules.
    banner: { js: 'import { createRequire as __bundleRequire } from "node:module"; const require = __bundleRequire(import.meta.url);' },
  });
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(args: string[], env: Record<string, string | undefined> = {}, viaNpm = false): Promise<Run> {
  const [cmd, argv] = viaNpm ? ["npm", ["run", "-s", "admin", "--", ...args]] : [process.execPath, [bundle, ...args]];
  return new Promise((resolve) => {
    // A variable given as undefined is left out (`ADMIN_URL: undefined`: the CLI's own default).
    const merged = Object.fromEntries(Object.entries({ ...process.env, ADMIN_URL: baseUrl(), ADMIN_TOKEN, ...env }).filter(([, v]) => v !== undefined));
    execFile(cmd as string, argv as string[], { cwd: ROOT, env: merged }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

const tag = () => `${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;

// Each case starts the CLI up to four times: a second or more each on a loaded machine (a full run at load 12 passed 30 s).
describe("admin create-account", { timeout: 120_000 }, () => {
  it("prints only the new key on stdout (through npm run -s admin), and the key works", async () => {
    const email = `cli-${tag()}@example.com`;
    const r = await run(["create-account", "--email", email, "--name", "Cli Person", "--timezone", "London"], {}, true);
    expect(r.stderr).toContain(`created ${email} (id `);
    expect(r.code).toBe(0);
    const key = r.stdout.trim();
    expect(key).toMatch(/^\S{20,}$/);
    expect(r.stdout).toBe(`${key}\n`);
    const me = await rest("GET", "/user", { key });
    expect(me.status).toBe(200);
    expect(me.body.data).toMatchObject({ email, full_name: "Cli Person", timezone: "London", url: expect.stringMatching(/^cli-person/) });
  });

  it("--json prints the user with the key; --url is passed on", async () => {
    const url = `cli-url-${tag()}`;
    const r = await run(["create-account", "--email", `${url}@example.com`, "--name", "Json Person", "--url", url, "--json"]);
    expect(r.code).toBe(0);
    const user = JSON.parse(r.stdout);
    expect(user).toMatchObject({ email: `${url}@example.com`, full_name: "Json Person", url, timezone: "UTC" });
    expect((await rest("GET", "/user", { key: user.api_key })).status).toBe(200);
  });

  it("without ADMIN_URL reaches the service on PORT (and HOST), as npm start reads them", async () => {
    const { port, hostname } = new URL(baseUrl());
    const email = `cli-port-${tag()}@example.com`;
    const r = await run(["create-account", "--email", email, "--name", "Port Person"], { ADMIN_URL: undefined, PORT: port, HOST: hostname });
    expect({ code: r.code, stderr: r.stderr }).toMatchObject({ code: 0, stderr: expect.stringContaining(`created ${email}`) });
    expect((await rest("GET", "/user", { key: r.stdout.trim() })).body.data.email).toBe(email);
    // Listening on every address: the loopback address reaches it.
    const wildcard = await run(["create-account", "--email", `w-${email}`, "--name", "Port Person"], { ADMIN_URL: undefined, PORT: port, HOST: "0.0.0.0" });
    expect(wildcard.code).toBe(0);
    // Another port is another service (none here): the CLI did not go to 8080 or anywhere else.
    const none = await run(["create-account", "--email", `n-${email}`, "--name", "Port Person"], { ADMIN_URL: undefined, PORT: "1", HOST: hostname });
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/^error: unavailable: /);
    const bad = await run(["create-account", "--email", `b-${email}`, "--name", "Port Person"], { ADMIN_URL: undefined, PORT: "eighty" });
    expect(bad).toMatchObject({ code: 1, stderr: 'error: PORT must be an integer 0..65535, got "eighty"\n' });
  });

  it("says what the service refused, with the RPC code, and exits 1", async () => {
    const badToken = await run(["create-account", "--email", `x-${tag()}@example.com`, "--name", "X"], { ADMIN_TOKEN: "wrong" });
    expect(badToken).toMatchObject({ code: 1, stdout: "", stderr: "error: unauthenticated: admin token is missing or invalid\n" });
    const badZone = await run(["create-account", "--email", `x-${tag()}@example.com`, "--name", "X", "--timezone", "Mars/Olympus"]);
    expect(badZone.code).toBe(1);
    expect(badZone.stderr).toMatch(/^error: invalid_argument: timezone/);
  });

  it("usage errors exit 2 with the usage text", async () => {
    for (const args of [["create-account", "--email", "a@example.com"], ["create-account", "--bogus", "1"], ["frobnicate"], []]) {
      const r = await run(args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stdout + r.stderr).toContain("Usage: npm run -s admin -- <command>");
    }
    const noToken = await run(["create-account", "--email", "a@example.com", "--name", "A"], { ADMIN_TOKEN: "" });
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toMatch(/^error: ADMIN_TOKEN is not set/);
  });
});

describe("admin import-bookings", { timeout: 120_000 }, () => {
  it("imports a file of bookings all at once and prints the ids", async () => {
    const key = (await run(["create-account", "--email", `imp-${tag()}@example.com`, "--name", "Importer"])).stdout.trim();
    const event = await rest("POST", "/events", { key, body: { event: { name: "Imported", url: `imported-${tag()}` } } });
    expect(event.status).toBe(201);
    const eventId = event.body.data.id;
    const file = join(dir, "bookings.json");
    writeFileSync(file, JSON.stringify({
      bookings: [
        { event_id: eventId, start_time: "2030-03-04T10:00:00Z", attendee_name: "Ann", attendee_email: "ann@example.com" },
        { event_id: eventId, start_time: "2030-03-05T10:00:00Z", attendee_name: "Bob", attendee_email: "bob@example.com", status: "canceled", internal_notes: "moved in" },
      ],
    }));
    const r = await run(["import-bookings", file]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.imported).toBe(2);
    expect(out.ids).toHaveLength(2);
    const upcoming = await rest("GET", `/events/${eventId}/bookings?category=upcoming&date_from=2030-03-01&date_to=2030-03-31`, { key });
    expect(upcoming.status).toBe(200);
    expect(JSON.stringify(upcoming.body.data)).toContain(out.ids[0]);
  });

  it("refuses the whole file when one entry is bad, naming it; refuses unknown fields and unreadable files", async () => {
    const file = join(dir, "bad.json");
    writeFileSync(file, JSON.stringify([{ event_id: "000000000000000000000000", start_time: "2030-03-04T10:00:00Z", attendee_name: "A", attendee_email: "a@example.com" }]));
    const missing = await run(["import-bookings", file]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe("error: invalid_argument: bookings[0].event_id does not name an event\n");

    writeFileSync(file, JSON.stringify({ bookings: [{ event_id: "x", start_tme: "2030-03-04T10:00:00Z" }] }));
    const typo = await run(["import-bookings", file]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/start_tme/);

    writeFileSync(file, "{not json");
    expect((await run(["import-bookings", file])).code).toBe(2);
    expect((await run(["import-bookings", join(dir, "nope.json")])).stderr).toMatch(/^error: cannot read /);
  });
});
