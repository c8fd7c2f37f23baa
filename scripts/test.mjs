// `npm test`'s last step: the type check and the test suite side by side, each with its own exit status.
// tsc takes about 12 s of one core; the suite leaves about a sixth of the two cores idle while it waits on its
// servers, browsers and timers, so the check fits beside it instead of before it. Arguments go to vitest
// (`npm test -- --reporter=json ...`).
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

const [types, tests] = await Promise.all([run("node_modules/.bin/tsc", ["--noEmit"]), run("node_modules/.bin/vitest", ["run", ...process.argv.slice(2)])]);
if (types !== 0) console.error("npm test: the type check (tsc --noEmit) failed");
process.exit(types !== 0 ? types : tests);
