// The brand colour's rules: how it is written, and the accent colours the pages make from it, readable whatever the brand.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { EVENT_COLORS } from "../../src/domain/event.js";
import { brandPalette, contrast, normaliseBrandColor } from "../../src/domain/brand.js";

describe("normaliseBrandColor", () => {
  it("takes #rrggbb in any case and #rgb, stores lowercase; empty clears", () => {
    expect(normaliseBrandColor("#1A73E8")).toBe("#1a73e8");
    expect(normaliseBrandColor(" #abc ")).toBe("#aabbcc");
    expect(normaliseBrandColor("")).toBeNull();
  });

  it.each(["red", "1a73e8", "#12345", "#1234567", "#ggg000", "rgb(1,2,3)"])("refuses %j with 422 naming the field and the form", (v) => {
    expect(() => normaliseBrandColor(v)).toThrow(/brand_color must be a colour written #rrggbb/);
  });
});

describe("brandPalette", () => {
  it("keeps a dark enough colour as it is", () => {
    expect(brandPalette("#0b57d0").accent).toBe("#0b57d0");
  });

  it.each(["#ffeb3b", "#f6bf26", "#87ceeb", "#ffffff", "#33b679", "#e67c73", "#000000"])("%s: accent and its tint read at 4.5:1 on white and on each other", (brand) => {
    const { accent, accentSoft } = brandPalette(brand);
    expect(contrast(accent, "#ffffff")).toBeGreaterThanOrEqual(4.5);
    expect(contrast(accent, accentSoft)).toBeGreaterThanOrEqual(4.5);
  });
});

describe("event colours", () => {
  it("the pages' stylesheet colours every colour name an event may have", () => {
    const css = readFileSync(new URL("../../src/features/pages/client/style.css", import.meta.url), "utf8");
    expect(EVENT_COLORS.filter((c) => !new RegExp(`\\.color-${c} \\{ --event-color: #[0-9a-f]{6}; \\}`).test(css))).toEqual([]);
  });
});
