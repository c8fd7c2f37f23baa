// An account's brand colour: how it is written (#rrggbb), and the pages' accent colours made from it so text on them stays readable.
import { invalid } from "./errors.js";

/** `#rrggbb`, or `#rgb` read as `#rrggbb`; stored lowercase. "" clears the colour (null). */
export function normaliseBrandColor(value: string): string | null {
  const v = value.trim().toLowerCase();
  if (v === "") return null;
  const short = /^#([0-9a-f])([0-9a-f])([0-9a-f])$/.exec(v);
  if (short) return `#${short[1]}${short[1]}${short[2]}${short[2]}${short[3]}${short[3]}`;
  if (!/^#[0-9a-f]{6}$/.test(v)) throw invalid("brand_color must be a colour written #rrggbb (such as #1a73e8), or empty to clear it");
  return v;
}

type Rgb = readonly [number, number, number];

function rgbOf(hex: string): Rgb {
  return [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)) as unknown as Rgb;
}

function hexOf(rgb: Rgb): string {
  return `#${rgb.map((c) => Math.round(Math.min(255, Math.max(0, c))).toString(16).padStart(2, "0")).join("")}`;
}

/** WCAG 2's relative luminance. */
function luminance(rgb: Rgb): number {
  const [r, g, b] = rgb.map((c) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** WCAG 2's contrast ratio of two colours (1 to 21). */
export function contrast(a: string, b: string): number {
  const [x, y] = [luminance(rgbOf(a)), luminance(rgbOf(b))].sort((m, n) => n - m);
  return (x + 0.05) / (y + 0.05);
}

const WHITE: Rgb = [255, 255, 255];
/** WCAG AA for body text: the accent colours links, buttons and their labels. */
const READABLE = 4.5;

function mix(a: Rgb, b: Rgb, share: number): Rgb {
  return a.map((c, i) => c * (1 - share) + b[i] * share) as unknown as Rgb;
}

/**
 * The pages' accent (links, buttons, focus ring; white text on it) and its soft tint (free days; accent text on
 * it) from a brand colour. A colour too light to read on white (a yellow, a pale blue) is darkened in small steps,
 * keeping its hue, until both pairs reach 4.5:1, so a brand never costs the pages their accessibility.
 */
export function brandPalette(brandColor: string): { accent: string; accentSoft: string } {
  let rgb = rgbOf(brandColor);
  for (let step = 0; step < 60; step++) {
    const accent = hexOf(rgb);
    const accentSoft = hexOf(mix(rgb, WHITE, 0.9));
    if (contrast(accent, "#ffffff") >= READABLE && contrast(accent, accentSoft) >= READABLE) return { accent, accentSoft };
    rgb = rgb.map((c) => c * 0.92) as unknown as Rgb;
  }
  return { accent: "#000000", accentSoft: "#e6e6e6" };
}
