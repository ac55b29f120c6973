import { createTheme, type CSSVariablesResolver, type MantineColorSchemeManager } from '@mantine/core';

export const theme = createTheme({
  primaryColor: 'indigo',
  fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
  // Filled buttons and badges at shade 8 in both schemes, their text black or white by the
  // background's luminance (over 0.2: black): at Mantine's defaults (shade 7 in light, 5 in dark,
  // always white) a filled indigo button read at 3.7:1 in dark, a red one at 3.9:1 and 2.8:1, an
  // orange one at 3.0:1. Now every colour the console fills stays above WCAG AA (4.5:1).
  primaryShade: 8,
  autoContrast: true,
  luminanceThreshold: 0.2,
});

/** The colours the console fills (buttons, confirm dialogs, badges): the primary, then the others. */
export const FILLED_COLOURS = ['indigo', 'red', 'orange', 'gray'];

/** The colours whose text (`c="red"`, StatusBadge, the overview) the console shows. */
const TEXT_COLOURS = ['red', 'green', 'yellow', 'blue', 'gray', 'grape', 'indigo'];

/**
 * Text a step further from the background than Mantine's defaults, for WCAG AA contrast on cards
 * and on light tints (badges, an active link): in light, dimmed text at gray 7 and coloured text
 * (`--mantine-color-<c>-text`, what `c="red"` uses) at shade 9 instead of 7; in dark, dimmed at
 * dark 1 instead of 2 and coloured text at shade 3 instead of 4. Code asks for `c="red"`, never a
 * fixed shade, which is readable in one scheme only.
 */
const textShades = (dimmed: string, shade: number) => ({
  '--mantine-color-dimmed': `var(--mantine-color-${dimmed})`,
  ...Object.fromEntries(TEXT_COLOURS.map((c) => [`--mantine-color-${c}-text`, `var(--mantine-color-${c}-${shade})`])),
});

export const cssVariables: CSSVariablesResolver = () => ({
  variables: {},
  light: textShades('gray-7', 9),
  dark: textShades('dark-1', 3),
});

/**
 * The colour scheme follows the OS and nothing in the console changes it, so nothing is stored:
 * Mantine's default manager reads localStorage while the first page renders, and a browser's first
 * localStorage access of a session blocks the page while it opens the store (50 ms and more).
 */
export const osColorScheme: MantineColorSchemeManager = {
  get: (defaultValue) => defaultValue,
  set: () => undefined,
  subscribe: () => undefined,
  unsubscribe: () => undefined,
  clear: () => undefined,
};
