import { createTheme, type CSSVariablesResolver } from '@mantine/core';

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
