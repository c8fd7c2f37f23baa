// `npm test`: the contract's lint, the check of gen/, knip and the type check, one after the other, beside the test suite; each with its own exit status.
// The suite leaves about a tenth of the two cores idle while it waits on its servers, browsers and timers (most of it
// in its first half minute, while the first servers start), so the checks fit beside it instead of before it: they
// ran first for about 8 s of wall in which the suite had not begun. tsc is TypeScript 7's native compiler
// (package.json: `@typescript/native`; `typescript` is 6.0, whose JavaScript API knip, dependency-cruiser and the
// layout tests use), on one thread here: about 7 s of CPU on a fresh clone, where its default of several checker
// threads spends 18 s and 5.9 spent 24-27 s (bench/RESULTS.md). Arguments go to vitest (`npm test -- --reporter=json ...`).
import { spawn } from "node:child_process";

function run(command, args) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: "inherit" });
    child.on("error", (err) => {
      console.error(`${command}: ${err.message}`);
      resolve(1);
    });
    child.on("exit", (code) => resolve(code ?? 1));
  });
}

/** The checks in turn; the first that fails ends the chain, named. */
async function checks() {
  const steps = [
    ["the contract's lint (npm run lint:proto)", "npm", ["run", "-s", "lint:proto"]],
    ["the check of gen/ (npm run check:gen)", "npm", ["run", "-s", "check:gen"]],
    ["knip (npm run lint:unused)", "npm", ["run", "-s", "lint:unused"]],
    ["the type check (tsc --noEmit)", "node_modules/.bin/tsc", ["--noEmit", "--singleThreaded"]],
  ];
  for (const [name, command, args] of steps) {
    const code = await run(command, args);
    if (code !== 0) {
      console.error(`npm test: ${name} failed`);
      return code;
    }
  }
  return 0;
}

const [checked, tests] = await Promise.all([checks(), run("node_modules/.bin/vitest", ["run", ...process.argv.slice(2)])]);
// Said again at the end, where a reader of a long run's output looks.
if (checked !== 0) console.error("npm test: a check beside the suite failed (see above)");
process.exit(checked !== 0 ? checked : tests);
