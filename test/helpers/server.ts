// Starts the real service (src/app/main.ts) as a child process on a free port and stops it; used by globalSetup and by tests that need their own server.
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { whenListening } from "./listening.js";

export const ADMIN_TOKEN = "test-admin-token";
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface RunningServer {
  baseUrl: string;
  port: number;
  child: ChildProcess;
  /** Everything the server wrote to stderr so far. */
  logs(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** `nodeArgs`: how node runs the service; default the TypeScript source through tsx, as `npm start` does. */
export async function startServer(env: Record<string, string> = {}, timeoutMs = 30_000, nodeArgs = ["--import", "tsx", "src/app/main.ts"]): Promise<RunningServer> {
  const child = spawn(process.execPath, nodeArgs, {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: "0",
      HOST: "127.0.0.1",
      ADMIN_TOKEN,
      // Needed only with MONGODB_URI (a real MongoDB); harmless with the embedded server.
      API_KEY_SECRET: process.env.API_KEY_SECRET ?? "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
      // Test files share one key per account and one address; the limiter stays on, out of their way.
      // test/api/ratelimit.test.ts starts servers with small limits.
      RATE_LIMIT_PER_KEY: "1000000",
      RATE_LIMIT_PUBLIC_PER_IP: "1000000",
      // Tests book one host many times under one e-mail; test/api/abuse.test.ts starts servers with small caps.
      BOOKING_LIMIT_PER_BOOKER: "1000000",
      BOOKING_LIMIT_PER_HOST: "1000000",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  child.stdout!.resume();
  const { port, output } = await whenListening(child, [child.stderr!], timeoutMs);
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    child,
    logs: output,
    async stop(signal: NodeJS.Signals = "SIGTERM") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
