// A Node program using the installed @scheduling-service/client package (npm run clients): loads every generated file, makes an account, an event, lists it, and is refused with a wrong key, over gRPC, Connect and gRPC-Web.
/*
 * Usage: node client_test.mjs <base URL> <label>   with ADMIN_TOKEN in the environment, run in the directory the
 * package is installed in (test/api/clients.test.ts: the README's, and one with the oldest dependencies it
 * declares). Prints one line, `client-check <label> <JSON of what it saw>`; exits non-zero (the reason on stderr)
 * when anything is not as expected.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [baseUrl, label] = process.argv.slice(2);
const here = process.cwd();
// The package as the directory it runs in has it installed (not this file's own folder, the repository).
const client = await import(pathToFileURL(createRequire(join(here, "index.js")).resolve("@scheduling-service/client")).href);
const { Code, ConnectError, createSchedulingClients } = client;

function fail(why) {
  process.stderr.write(`FAIL: ${why}\n`);
  process.exit(1);
}
const expect = (condition, why) => condition || fail(why);

// Every generated file, by its descriptor (`file_scheduling_v1_event`): each was loaded, as the entry imports them all.
const files = Object.keys(client).filter((name) => name.startsWith("file_") && client[name]?.kind === "file").sort();
const versionOf = (name) => JSON.parse(readFileSync(join(here, "node_modules", name, "package.json"), "utf8")).version;
const versions = Object.fromEntries(["@bufbuild/protobuf", "@connectrpc/connect", "@connectrpc/connect-node"].map((n) => [n, versionOf(n)]));

const tag = `node-${process.pid}-${Date.now()}`;
const admin = createSchedulingClients({ baseUrl, adminToken: process.env.ADMIN_TOKEN });
const { user } = await admin.AdminService.createAccount({ account: { email: `${tag}@example.com`, fullName: "Node Client", timezone: "London" } });
expect(user?.apiKey?.length > 20, `no api key in ${JSON.stringify(user)}`);

// A wrong key is refused with the code and message the contract names.
let refused;
try {
  await createSchedulingClients({ baseUrl, apiKey: `${user.apiKey}x`, protocol: "connect" }).UserService.getUser({});
  fail("getUser with a wrong key succeeded");
} catch (err) {
  const e = ConnectError.from(err);
  expect(e.code === Code.Unauthenticated && e.rawMessage === "Invalid api_key", `wrong key: ${Code[e.code]} ${e.rawMessage}`);
  refused = `${Code[e.code]} ${e.rawMessage}`;
}

const { event } = await createSchedulingClients({ baseUrl, apiKey: user.apiKey, protocol: "grpc-web" }).EventService.createEvent({
  event: { name: "Node Chat", url: `node-chat-${tag}`, slotDuration: "30_minutes" },
});
expect(event?.slotDuration === "30 minutes", `created event: ${JSON.stringify(event)}`);
const { events } = await createSchedulingClients({ baseUrl, apiKey: user.apiKey }).EventService.listEvents({});
expect(events.length === 1 && events[0].id === event.id, `listed events: ${events.map((e) => e.id)} (created ${event.id})`);

console.log(`client-check ${label} ${JSON.stringify({ versions, files, refused, event_url: event.url, listed: events.length })}`);
