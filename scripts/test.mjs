// `npm test`'s last step: the type check and the test suite side by side, each with its own exit status.
// The suite leaves about a tenth of the two cores idle while it waits on its servers, browsers and timers, so the
// check fits beside it instead of before it. tsc is TypeScript 7's native compiler (package.json: `@typescript/native`;
// `typescript` is 6.0, whose JavaScript API knip, dependency-cruiser and the layout tests use), on one thread here:
// about 7 s of CPU on a fresh clone, where its default of several checker threads spends 18 s and 5.9 spent 24-27 s
// (bench/RESULTS.md). Arguments go to vitest (`npm test -- --reporter=json ...`).
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

const [types, tests] = await Promise.all([run("node_modules/.bin/tsc", ["--noEmit", "--singleThreaded"]), run("node_modules/.bin/vitest", ["run", ...process.argv.slice(2)])]);
if (types !== 0) console.error("npm test: the type check (tsc --noEmit) failed");
process.exit(types !== 0 ? types : tests);
