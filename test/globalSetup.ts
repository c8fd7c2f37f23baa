// Starts one real server (embedded database unless MONGODB_URI is set) for every API test file.
import type { TestProject } from "vitest/node";
import { startServer, type RunningServer } from "./helpers/server.js";

let server: RunningServer | undefined;

export async function setup(project: TestProject): Promise<void> {
  server = await startServer();
  project.provide("baseUrl", server.baseUrl);
}

export async function teardown(): Promise<void> {
  const code = await server?.stop();
  if (code !== 0) throw new Error(`server exited with ${code} on SIGTERM:\n${server?.logs().slice(-3000)}`);
}

declare module "vitest" {
  export interface ProvidedContext {
    baseUrl: string;
  }
}
