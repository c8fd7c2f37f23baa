// Debian's Chromium driven by playwright-core for the page tests: launch, screenshots under .tmp/screenshots, and an axe-core check.
import { mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type Locator, type Page } from "playwright-core";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SCREENSHOTS = `${ROOT}.tmp/screenshots`;

/**
 * Headless Chromium with nothing that reaches the network by itself; playwright gives it a fresh profile directory.
 * Debian's chromium-headless-shell: Chromium's headless-only build, the one playwright itself runs for headless
 * tests. The pages' tests spend about 36 s of CPU with it against 63 s with the full browser in headless mode
 * (bench/RESULTS.md, "Issue 39 (2026-12-05, second session)"). CHROMIUM_PATH names another build.
 */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium-headless-shell",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: `${SCREENSHOTS}/${name}.png`, fullPage: true });
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * Runs axe-core in the page. It is evaluated through the DevTools protocol, which the page's CSP does not govern:
 * the page itself keeps refusing inline scripts. Returns the serious and critical violations.
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(ctx: Document, opts: object): Promise<{ violations: AxeViolation[] }> } }).axe;
    const result = await axe.run(document, { resultTypes: ["violations"] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) }));
  });
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical");
}

/**
 * The page's `nth` shown time from the first that starts at least `marginMs` from now. A host open with no notice
 * (ALWAYS_OPEN) offers the time about to begin; picked in the last seconds before a half hour, it was past by the
 * time the form went in, and the test waited out its timeout for a confirmation (a full run at 09:30 UTC).
 */
export async function laterSlot(page: Page, nth = 0, marginMs = 120_000): Promise<Locator> {
  const times = page.locator("#times [data-slot]");
  await times.first().waitFor();
  const starts = await times.evaluateAll((els) => els.map((e) => e.getAttribute("data-slot") ?? ""));
  const from = Date.now() + marginMs;
  const first = starts.findIndex((s) => Date.parse(s) >= from);
  return times.nth(Math.max(0, first) + nth);
}
