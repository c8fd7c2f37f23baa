// Profile picture uploads, 16 at once, of the heaviest pictures the service accepts: its peak RSS per kind against its RSS at rest (issue 29: at most 250 MB).
import { readFileSync, writeFileSync } from "node:fs";
import sharp from "sharp";
import { ADMIN_TOKEN, peakRssMb, startService } from "./service.js";

/*
 * Usage: npm run bench:pictures   (BENCH_PICTURES_AT_ONCE: uploads at once, default 16)
 *
 * Each kind is a picture near 5 MB whose dimensions are at or near the limits (10 000 px a side, 50 megapixels):
 * what costs the most memory to decode. The service's peak RSS (VmHWM) is reset before each kind (Linux
 * clear_refs 5) and read after all its uploads answered; the baseline is its RSS at rest after one small upload
 * (libvips loaded), measured in the same run.
 */
const AT_ONCE = Number(process.env.BENCH_PICTURES_AT_ONCE ?? 16);
const TARGET_MB = 250;
const FIVE_MB = 5 * 1024 * 1024;

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : NaN;
}

function resetPeak(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, "5");
}

/** A smooth picture of width x height with some noise, so it compresses to a few MB yet decodes to its full size. */
async function picture(width: number, height: number, format: "jpeg" | "png" | "webp" | "gif", progressive = false): Promise<Buffer> {
  const small = { width: Math.round(width / 64), height: Math.round(height / 64), channels: 3 as const };
  const noise = await sharp({ create: { ...small, background: "#808080", noise: { type: "gaussian", mean: 128, sigma: 40 } } }).raw().toBuffer();
  const image = sharp(await sharp(noise, { raw: small }).resize(width, height, { kernel: "cubic" }).raw().toBuffer(), { raw: { width, height, channels: 3 } });
  switch (format) {
    case "jpeg":
      return image.jpeg({ quality: 70, progressive }).toBuffer();
    case "png":
      return image.png({ compressionLevel: 9, palette: true, colours: 16 }).toBuffer();
    case "webp":
      return image.webp({ quality: 60 }).toBuffer();
    default:
      return image.gif({ colours: 16 }).toBuffer();
  }
}

async function upload(port: number, key: string, bytes: Buffer, type: string): Promise<number> {
  const form = new FormData();
  form.append("user[profile_picture]", new Blob([new Uint8Array(bytes)], { type }), "p");
  const res = await fetch(`http://127.0.0.1:${port}/api/v1/users/profile_picture`, { method: "PUT", headers: { "x-api-key": key }, body: form });
  await res.arrayBuffer();
  return res.status;
}

async function main(): Promise<void> {
  const kinds: Array<[string, Promise<Buffer>, string]> = [
    ["JPEG 4000 x 3000 (a 12 MP phone photo)", picture(4000, 3000, "jpeg"), "image/jpeg"],
    ["JPEG 8000 x 6000 progressive (48 MP)", picture(8000, 6000, "jpeg", true), "image/jpeg"],
    ["PNG 7000 x 7000 (49 MP)", picture(7000, 7000, "png"), "image/png"],
    ["WebP 7000 x 7000 (49 MP)", picture(7000, 7000, "webp"), "image/webp"],
    ["GIF 7000 x 7000 (49 MP)", picture(7000, 7000, "gif"), "image/gif"],
  ];
  const { child, port } = await startService();
  const pid = child.pid!;
  try {
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/admin/accounts`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-admin-token": ADMIN_TOKEN },
      body: JSON.stringify({ account: { email: `pictures-${Date.now()}@example.com`, full_name: "Bench Pictures" } }),
    });
    const key = ((await res.json()) as { data: { api_key: string } }).data.api_key;
    await upload(port, key, await picture(64, 64, "png"), "image/png");
    await new Promise((r) => setTimeout(r, 1000));
    const rest = rssMb(pid);
    console.log(`service RSS at rest (after one small upload): ${rest.toFixed(1)} MB; ${AT_ONCE} uploads at once per kind; target ${TARGET_MB} MB\n`);
    console.log("| picture | bytes | answers | wall s | peak RSS, MB | × at rest | ≤ 250 MB |\n|---|---:|---|---:|---:|---:|---|");
    let worst = 0;
    for (const [name, made, type] of kinds) {
      const bytes = await made;
      if (bytes.length > FIVE_MB) throw new Error(`${name}: ${bytes.length} bytes, over 5 MB`);
      resetPeak(pid);
      const t0 = performance.now();
      const statuses = await Promise.all(Array.from({ length: AT_ONCE }, () => upload(port, key, bytes, type)));
      const seconds = (performance.now() - t0) / 1000;
      const peak = peakRssMb(pid);
      worst = Math.max(worst, peak);
      const counts = [...new Set(statuses)].map((s) => `${statuses.filter((x) => x === s).length}× ${s}`).join(", ");
      console.log(`| ${name} | ${(bytes.length / 1024 / 1024).toFixed(1)} MB | ${counts} | ${seconds.toFixed(1)} | ${peak.toFixed(1)} | ${(peak / rest).toFixed(2)} | ${peak <= TARGET_MB ? "met" : "MISSED"} |`);
    }
    console.log(`\n${worst <= TARGET_MB ? "met    " : "MISSED "} peak RSS during ${AT_ONCE} concurrent picture uploads: ${worst.toFixed(1)} MB (target ${TARGET_MB} MB)`);
  } finally {
    child.kill("SIGTERM");
  }
}

await main();
