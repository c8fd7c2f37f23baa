// `npm run build` step: bundles the booking pages' script and stylesheet into dist/web-assets (src/features/pages/assets.ts reads them there).
import { fileURLToPath } from "node:url";
import { writeAssets } from "../src/features/pages/assets.js";

const dir = fileURLToPath(new URL("../dist/web-assets", import.meta.url));
const manifest = await writeAssets(dir);
console.log(`booking page assets: ${manifest.script}, ${manifest.style} in ${dir}`);
