/**
 * WCAG 2 colour contrast, for the console's tests: of colours as the browser computes them
 * (`rgb(...)`, `rgba(...)`) and as Mantine's theme writes them (`#rgb`, `#rrggbb`).
 */
export type Rgba = [number, number, number, number];

/** A computed CSS colour, `rgb(r, g, b)` or `rgba(r, g, b, a)`. */
export const parseRgba = (css: string): Rgba => [...(css.match(/[\d.]+/g) ?? []).map(Number), 1].slice(0, 4) as Rgba;

/** A `#rgb` or `#rrggbb` colour, opaque. */
export const parseHex = (hex: string): Rgba => {
  const pairs = hex.length === 4 ? [1, 2, 3].map((i) => hex[i].repeat(2)) : [1, 3, 5].map((i) => hex.slice(i, i + 2));
  return [...pairs.map((pair) => parseInt(pair, 16)), 1] as Rgba;
};

/** `top` laid over an opaque `below`. */
export const over = (top: Rgba, below: Rgba): Rgba => [...top.slice(0, 3).map((c, i) => c * top[3] + below[i] * (1 - top[3])), 1] as Rgba;

/** Relative luminance of an opaque colour. */
export const luminance = (c: Rgba) =>
  c
    .slice(0, 3)
    .map((v) => v / 255)
    .map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4))
    .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);

/** The contrast ratio of two opaque colours, 1 to 21. */
export function contrastRatio(a: Rgba, b: Rgba): number {
  const [x, y] = [luminance(a), luminance(b)];
  return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
}
