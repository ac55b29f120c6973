import { createTheme, type CSSVariablesResolver, type MantineColorSchemeManager } from '@mantine/core';

export const theme = createTheme({
  primaryColor: 'indigo',
  fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
  // Darker default text on grey keeps contrast above WCAG AA in both schemes.
  primaryShade: { light: 7, dark: 5 },
});

/** Dimmed text one shade darker than Mantine's default, for WCAG AA contrast on white. */
export const cssVariables: CSSVariablesResolver = () => ({
  variables: {},
  light: { '--mantine-color-dimmed': 'var(--mantine-color-gray-7)' },
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
