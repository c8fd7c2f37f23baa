// Operator command line (`npm run -s admin -- <command>`): creates accounts and imports bookings through the admin RPCs.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { AdminService, ImportBookingsRequestSchema } from "../gen/scheduling/v1/admin_pb.js";
import { codeName } from "../src/platform/http/observe.js";
import { localServiceUrl } from "../src/app/config.js";

const USAGE = `Usage: npm run -s admin -- <command> [options]

Commands:
  create-account --email <e-mail> --name <full name> [--url <url>] [--timezone <zone>] [--json]
      Creates an account and prints its API key (with --json: the whole user object).
  import-bookings <file.json>
      Imports bookings (all or nothing, up to 1000 a call). The file holds {"bookings": [...]} or the array
      itself; each entry: event_id, start_time, attendee_name, attendee_email, and optionally status,
      archived, booked_at, internal_notes. Prints {"imported": n, "ids": [...]}.

Environment:
  ADMIN_URL    the service (the Connect protocol over HTTP/1.1); default: the one this environment starts,
               http://<HOST>:<PORT> (127.0.0.1 and 8080 unless set), as npm start reads them
  ADMIN_TOKEN  the service's ADMIN_TOKEN (required)
`;

class UsageError extends Error {}

function client() {
  const token = process.env.ADMIN_TOKEN;
  if (!token) throw new UsageError("ADMIN_TOKEN is not set");
  const baseUrl = (process.env.ADMIN_URL || localServiceUrl(process.env)).replace(/\/+$/, "");
  const withToken: Interceptor = (next) => (req) => {
    req.header.set("x-admin-token", token);
    return next(req);
  };
  return createClient(AdminService, createConnectTransport({ baseUrl, httpVersion: "1.1", interceptors: [withToken] }));
}

async function createAccount(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { email: { type: "string" }, name: { type: "string" }, url: { type: "string" }, timezone: { type: "string" }, json: { type: "boolean" } },
    strict: true,
  });
  if (!values.email || !values.name) throw new UsageError("create-account needs --email and --name");
  const { user } = await client().createAccount({
    account: { email: values.email, fullName: values.name, url: values.url, timezone: values.timezone },
  });
  if (!user) throw new Error("the service answered without a user");
  if (values.json) {
    process.stdout.write(JSON.stringify({ id: user.id, email: user.email, full_name: user.fullName, url: user.url, timezone: user.timezone, api_key: user.apiKey }, null, 2) + "\n");
  } else {
    // The key alone on stdout, so `KEY=$(npm run -s admin -- create-account ...)` works; the rest for the reader.
    process.stderr.write(`created ${user.email} (id ${user.id}, url ${user.url}, timezone ${user.timezone})\n`);
    process.stdout.write(`${user.apiKey}\n`);
  }
}

function readBookingsFile(path: string) {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new UsageError(`cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const bookings = Array.isArray(parsed) ? parsed : (parsed as { bookings?: unknown } | null)?.bookings;
  if (!Array.isArray(bookings)) throw new UsageError(`${path} must hold {"bookings": [...]} or an array of bookings`);
  try {
    // Unknown fields are refused here: a misspelt field would otherwise be dropped without a word.
    return fromJson(ImportBookingsRequestSchema, { bookings: bookings as JsonValue[] });
  } catch (err) {
    throw new UsageError(`${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

async function importBookings(args: string[]): Promise<void> {
  const { positionals } = parseArgs({ args, allowPositionals: true, strict: true });
  if (positionals.length !== 1) throw new UsageError("import-bookings needs exactly one file");
  const request = readBookingsFile(positionals[0]);
  const answer = await client().importBookings(request);
  process.stdout.write(JSON.stringify({ imported: answer.imported, ids: answer.ids }) + "\n");
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === "create-account") await createAccount(rest);
    else if (command === "import-bookings") await importBookings(rest);
    else if (command === undefined || command === "help" || command === "--help" || command === "-h") {
      process.stdout.write(USAGE);
      return command === undefined ? 2 : 0;
    } else throw new UsageError(`unknown command "${command}"`);
    return 0;
  } catch (err) {
    if (err instanceof UsageError || (err instanceof TypeError && "code" in err && String(err.code).startsWith("ERR_PARSE_ARGS"))) {
      process.stderr.write(`error: ${err.message}\n\n${USAGE}`);
      return 2;
    }
    if (err instanceof ConnectError) {
      process.stderr.write(`error: ${codeName(err.code)}: ${err.rawMessage}\n`);
      return 1;
    }
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
