import { createTheme, type CSSVariablesResolver, type MantineColorSchemeManager } from '@mantine/core';

export const theme = createTheme({
  primaryColor: 'indigo',
  fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
  // Darker default text on grey keeps contrast above WCAG AA in both schemes.
  primaryShade: { light: 7, dark: 5 },
});

/** The colours whose text (`c="red"`, StatusBadge, the overview) the console shows. */
const TEXT_COLOURS = ['red', 'green', 'yellow', 'blue', 'gray', 'grape', 'indigo'];

/**
 * In the light scheme, dimmed text one shade darker than Mantine's default, and coloured text
 * (`--mantine-color-<c>-text`, what `c="red"` uses) at shade 9 instead of 7, for WCAG AA contrast
 * on white and on light tints. The dark scheme keeps Mantine's (shade 4 on dark), so code asks
 * for `c="red"`, never a fixed shade that is only readable in one scheme.
 */
export const cssVariables: CSSVariablesResolver = () => ({
  variables: {},
  light: {
    '--mantine-color-dimmed': 'var(--mantine-color-gray-7)',
    ...Object.fromEntries(TEXT_COLOURS.map((c) => [`--mantine-color-${c}-text`, `var(--mantine-color-${c}-9)`])),
  },
  dark: {},
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
