import '@mantine/core/styles.css';
import '@mantine/notifications/styles.css';
import { MantineProvider } from '@mantine/core';
import { ModalsProvider } from '@mantine/modals';
import { Notifications } from '@mantine/notifications';
import { QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { currentToken, hasRefreshToken, refresh, takeFragmentTokens } from './auth/session';
import { preloadRoute } from './lib/pages';
import { queryClient } from './lib/query-client';
import { cssVariables, osColorScheme, theme } from './theme';

// The first page's code and data (the data usually already asked for by boot.ts) are asked for
// before React renders the shell, so that rendering overlaps their download instead of preceding it.
const preloadFirstPage = () => preloadRoute(queryClient, location.pathname, location.search);
if (currentToken() || takeFragmentTokens(window.location, window.history)) preloadFirstPage();
else if (hasRefreshToken()) void refresh().then((ok) => ok && preloadFirstPage());

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <MantineProvider theme={theme} defaultColorScheme="auto" colorSchemeManager={osColorScheme} cssVariablesResolver={cssVariables}>
      <Notifications position="top-right" />
      <QueryClientProvider client={queryClient}>
        <ModalsProvider>
          <App />
        </ModalsProvider>
      </QueryClientProvider>
    </MantineProvider>
  </StrictMode>,
);
