// Fails when gen/ differs from what `buf generate` makes from proto/ right now (generated code must be reproducible).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const out = mkdtempSync(join(tmpdir(), "gen-check-"));

function files(dir) {
  const list = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) list.push(...files(p));
    else list.push(p);
  }
  return list;
}

try {
  execFileSync(join(root, "node_modules/.bin/buf"), ["generate", "--output", out], { cwd: root, stdio: "inherit" });
  const fresh = new Map(files(join(out, "gen")).map((p) => [relative(join(out, "gen"), p), readFileSync(p, "utf8")]));
  const committed = new Map(files(join(root, "gen")).map((p) => [relative(join(root, "gen"), p), readFileSync(p, "utf8")]));
  const problems = [];
  for (const [name, text] of fresh) {
    if (!committed.has(name)) problems.push(`missing in gen/: ${name}`);
    else if (committed.get(name) !== text) problems.push(`stale: gen/${name}`);
  }
  for (const name of committed.keys()) if (!fresh.has(name)) problems.push(`not generated from proto/: gen/${name}`);
  if (problems.length > 0) {
    console.error(`gen/ is not what 'npx buf generate' makes from proto/:\n  ${problems.join("\n  ")}\nRun 'npx buf generate' and commit gen/.`);
    process.exit(1);
  }
  console.log(`gen/ is fresh (${fresh.size} files)`);
} finally {
  rmSync(out, { recursive: true, force: true });
}
