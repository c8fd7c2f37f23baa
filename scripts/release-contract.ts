// `npm run release:contract`: records proto/ as the released contract (proto/released.binpb), which `npm run lint:proto` (part of npm test) checks every later change against with `buf breaking`.
/*
 * Usage: npm run release:contract     (when a version of the service, and so of its clients, is released)
 *
 * Clients built from a release keep running against later servers, so a released contract only grows: buf.yaml's
 * breaking category, WIRE_JSON, refuses what would break such a client on the wire or in JSON (a field
 * renumbered, retyped, renamed in JSON, removed without being reserved); new fields, messages and services pass.
 * This script refuses to cut a release that breaks the previous one: a break belongs in a new package
 * (scheduling.v2) beside the old one.
 *
 * The record is buf's image of proto/ (the files and their imports as descriptors, without source info: about
 * 40 KB), committed, so a clean clone checks against it without a network or a git tag.
 */
import { execFileSync } from "node:child_process";
import { existsSync, renameSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const BUF = join(ROOT, "node_modules/.bin/buf");
const RELEASED = "proto/released.binpb";

const buf = (...args: string[]) => execFileSync(BUF, args, { cwd: ROOT, stdio: "inherit" });

try {
  buf("lint");
  if (existsSync(join(ROOT, RELEASED))) buf("breaking", "--against", RELEASED);
  buf("build", "--exclude-source-info", "-o", `${RELEASED}.part`);
  renameSync(join(ROOT, `${RELEASED}.part`), join(ROOT, RELEASED));
  console.log(`${RELEASED}: proto/ as it is now is the released contract; commit it with the release`);
} catch {
  // buf has said what is wrong.
  console.error(`npm run release:contract: not cut; ${RELEASED} is unchanged`);
  process.exit(1);
}
