/**
 * The first script the page runs (its own small chunk, without React, placed first in index.html by
 * vite.config.ts): signs in from the URL fragment or the stored refresh token and asks for the
 * first page's data while the main bundle still downloads. The app's queries then find the answer,
 * or the request in flight, in the shared QueryClient. The app works without it (`npm run console:dev`).
 * (Its page's code is left to the main bundle: a page imported from here would split the main
 * bundle's modules into shared chunks, since this entry cannot count on them being loaded.)
 */
import { currentToken, hasRefreshToken, refresh, takeFragmentTokens } from './auth/session';
import { preloadData } from './lib/queries';
import { queryClient } from './lib/query-client';

const first = () => preloadData(queryClient, location.pathname, location.search);
if (currentToken() || takeFragmentTokens(window.location, window.history)) first();
else if (hasRefreshToken()) void refresh().then((ok) => ok && first());
