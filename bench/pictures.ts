// Profile picture uploads, 16 at once, of the heaviest pictures the service accepts: its peak RSS per kind against its RSS at rest (issue 29: at most 250 MB).
import { readFileSync, writeFileSync } from "node:fs";
import sharp, { type Sharp } from "sharp";
import { ADMIN_TOKEN, peakRssMb, startService } from "./service.js";

/*
 * Usage: npm run bench:pictures   (BENCH_PICTURES_AT_ONCE: uploads at once, default 16; BENCH_PICTURE_KINDS: run
 * only the kinds whose name holds one of these comma-separated words, any case, e.g. "progressive,gif")
 *
 * Each kind is a picture near 5 MB whose dimensions are at or near the limits (10 000 px a side, 50 megapixels):
 * what costs the most memory to decode. The service's peak RSS (VmHWM) is reset before each kind (Linux
 * clear_refs 5) and read after all its uploads answered; the baseline is its RSS at rest after one small upload
 * (libvips loaded), measured in the same run.
 */
const AT_ONCE = Number(process.env.BENCH_PICTURES_AT_ONCE ?? 16);
const ONLY = (process.env.BENCH_PICTURE_KINDS ?? "").toLowerCase().split(",").filter(Boolean);
const TARGET_MB = 250;
const FIVE_MB = 5 * 1024 * 1024;

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : NaN;
}

function resetPeak(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, "5");
}

/** A smooth picture of width x height with some noise (`sigma`), so it compresses to a few MB yet decodes to its full size. */
async function pixels(width: number, height: number, sigma = 40, blur = 64): Promise<Sharp> {
  const small = { width: Math.max(1, Math.round(width / blur)), height: Math.max(1, Math.round(height / blur)), channels: 3 as const };
  const noise = await sharp({ create: { ...small, background: "#808080", noise: { type: "gaussian", mean: 128, sigma } } }).raw().toBuffer();
  return sharp(await sharp(noise, { raw: small }).resize(width, height, { kernel: "cubic" }).raw().toBuffer(), { raw: { width, height, channels: 3 } });
}

/** The answer's status, with its message when it is not a 200. */
async function upload(port: number, key: string, bytes: Buffer, type: string): Promise<string> {
  const form = new FormData();
  form.append("user[profile_picture]", new Blob([new Uint8Array(bytes)], { type }), "p");
  const res = await fetch(`http://127.0.0.1:${port}/api/v1/users/profile_picture`, { method: "PUT", headers: { "x-api-key": key }, body: form });
  const body = (await res.json()) as { message: string };
  return res.status === 200 ? "200" : `${res.status} ${body.message}`;
}

async function main(): Promise<void> {
  // The heaviest of each kind the service accepts (src/domain/user.ts), and 5 MB files that fill the body budget.
  const kinds: Array<[string, () => Promise<Buffer>, string]> = [
    ["JPEG 8000 x 6000 (48 MP, baseline)", async () => (await pixels(8000, 6000)).jpeg({ quality: 70 }).toBuffer(), "image/jpeg"],
    ["JPEG 2828 x 2828 progressive (8 MP)", async () => (await pixels(2828, 2828)).jpeg({ quality: 80, progressive: true }).toBuffer(), "image/jpeg"],
    ["PNG 7000 x 7000 (49 MP)", async () => (await pixels(7000, 7000)).png({ palette: true, colours: 4, dither: 0 }).toBuffer(), "image/png"],
    ["PNG 2828 x 2828 interlaced (8 MP)", async () => (await pixels(2828, 2828)).png({ progressive: true, palette: true, colours: 16, dither: 0 }).toBuffer(), "image/png"],
    ["WebP 7000 x 7000 (49 MP)", async () => (await pixels(7000, 7000)).webp({ quality: 50 }).toBuffer(), "image/webp"],
    ["GIF 2828 x 2828 (8 MP)", async () => (await pixels(2828, 2828)).gif({ colours: 16, dither: 0 }).toBuffer(), "image/gif"],
    ["JPEG of 5 MB (2500 x 2500, noisy)", async () => (await pixels(2500, 2500, 60, 1)).jpeg({ quality: 92 }).toBuffer(), "image/jpeg"],
  ];
  const { child, port, logs } = await startService({}, process.env.BENCH_DEBUG_PEAKS ? ["--import", process.env.BENCH_DEBUG_PEAKS] : []);
  const pid = child.pid!;
  try {
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/admin/accounts`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-admin-token": ADMIN_TOKEN },
      body: JSON.stringify({ account: { email: `pictures-${Date.now()}@example.com`, full_name: "Bench Pictures" } }),
    });
    const key = ((await res.json()) as { data: { api_key: string } }).data.api_key;
    await upload(port, key, await (await pixels(64, 64)).png().toBuffer(), "image/png");
    await new Promise((r) => setTimeout(r, 1000));
    const rest = rssMb(pid);
    console.log(`service RSS at rest (after one small upload): ${rest.toFixed(1)} MB; ${AT_ONCE} uploads at once per kind; target ${TARGET_MB} MB\n`);
    console.log("| picture | bytes | answers | wall s | peak RSS, MB | × at rest | RSS after, MB | ≤ 250 MB |\n|---|---:|---|---:|---:|---:|---:|---|");
    let worst = 0;
    for (const [name, make, type] of kinds.filter(([n]) => ONLY.length === 0 || ONLY.some((w) => n.toLowerCase().includes(w)))) {
      const bytes = await make();
      if (bytes.length > FIVE_MB) throw new Error(`${name}: ${bytes.length} bytes, over 5 MB`);
      resetPeak(pid);
      const t0 = performance.now();
      const statuses = await Promise.all(Array.from({ length: AT_ONCE }, () => upload(port, key, bytes, type)));
      const seconds = (performance.now() - t0) / 1000;
      const peak = peakRssMb(pid);
      if (process.env.BENCH_DEBUG_PEAKS) { child.kill("SIGUSR2"); await new Promise((r) => setTimeout(r, 200)); console.log(logs().split("\n").filter((l) => l.startsWith("PEAKS")).pop()); }
      worst = Math.max(worst, peak);
      const counts = [...new Set(statuses)].map((s) => `${statuses.filter((x) => x === s).length}× ${s}`).join(", ");
      // What the process keeps once the kind is over: memory freed by the decodes but not given back shows here.
      await new Promise((r) => setTimeout(r, 1000));
      const after = rssMb(pid);
      console.log(`| ${name} | ${(bytes.length / 1024 / 1024).toFixed(1)} MB | ${counts} | ${seconds.toFixed(1)} | ${peak.toFixed(1)} | ${(peak / rest).toFixed(2)} | ${after.toFixed(1)} | ${peak <= TARGET_MB ? "met" : "MISSED"} |`);
    }
    console.log(`\n${worst <= TARGET_MB ? "met    " : "MISSED "} peak RSS during ${AT_ONCE} concurrent picture uploads: ${worst.toFixed(1)} MB (target ${TARGET_MB} MB)`);
  } finally {
    child.kill("SIGTERM");
  }
}

await main();
