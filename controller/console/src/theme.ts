import { createTheme } from '@mantine/core';

export const theme = createTheme({
  primaryColor: 'indigo',
  fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
  // Darker default text on grey keeps contrast above WCAG AA in both schemes.
  primaryShade: { light: 7, dark: 5 },
});
