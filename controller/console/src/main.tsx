import '@mantine/core/styles.css';
import { MantineProvider } from '@mantine/core';
import { QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { currentToken, hasRefreshToken, refresh, takeFragmentTokens } from './auth/session';
import { useLateParts } from './lib/late';
import { preloadRoute } from './lib/pages';
import { queryClient } from './lib/query-client';
import { cssVariables, osColorScheme, theme } from './theme';

// The first page's code and data (the data usually already asked for by boot.ts) are asked for
// before React renders the shell, so that rendering overlaps their download instead of preceding it.
const preloadFirstPage = () => preloadRoute(queryClient, location.pathname, location.search);
if (currentToken() || takeFragmentTokens(window.location, window.history)) preloadFirstPage();
else if (hasRefreshToken()) void refresh().then((ok) => ok && preloadFirstPage());

/** The notification and dialog layers, once the shell's late parts have loaded (lib/late.ts). */
function LateOverlays() {
  const late = useLateParts();
  return late ? <late.Overlays /> : null;
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <MantineProvider theme={theme} defaultColorScheme="auto" colorSchemeManager={osColorScheme} cssVariablesResolver={cssVariables}>
      <QueryClientProvider client={queryClient}>
        <App />
      </QueryClientProvider>
      <LateOverlays />
    </MantineProvider>
  </StrictMode>,
);
