import { useQueryClient } from '@tanstack/react-query';
import { Suspense, useEffect } from 'react';
import { Route, Switch } from 'wouter';
import { useSession } from './auth/use-session';
import { loading } from './components/Loading';
import { Shell } from './components/Shell';
import { lazyPage } from './lib/lazy-page';
import { pages, preloadRoute, ROUTES } from './lib/pages';

/** The shell's own queries (user menu, organization switcher). */
const HEADER_QUERIES = new Set(['me', 'organizations']);

/**
 * On sign-in, asks for the first page's data at once, in parallel with its code (not after it).
 * Then, once the page's own requests are answered (so it never holds a connection the first page
 * needs; the header's user and organizations requests do not count), fetches the busiest pages'
 * code, so moving to them waits on data only. (The shell's late parts, lib/late.ts, load when first
 * needed: fetched here they would compete with the page opened next.)
 */
function usePrefetch(enabled: boolean): void {
  const client = useQueryClient();
  useEffect(() => {
    if (!enabled) return;
    preloadRoute(client, location.pathname, location.search);
    let timer: ReturnType<typeof setTimeout>;
    const idle = () => {
      if (client.isFetching({ predicate: (q) => !HEADER_QUERIES.has(String(q.queryKey[0])) }) > 0) {
        timer = setTimeout(idle, 100);
        return;
      }
      void pages.devices.preload();
      void pages.device.preload();
      void pages.agents.preload();
    };
    timer = setTimeout(idle, 100);
    return () => clearTimeout(timer);
  }, [enabled, client]);
}

// Signed-in loads (the common case: a refresh token or an OIDC redirect) do not carry the sign-in form's code.
const SignIn = lazyPage(() => import('./pages/SignIn').then((m) => ({ default: m.SignIn })), loading);

export function App() {
  const session = useSession();
  usePrefetch(session === 'signed-in');
  if (session === 'checking') return loading;
  if (session === 'signed-out') return <SignIn />;
  return (
    <Shell>
      <Suspense fallback={loading}>
        <Switch>
          {ROUTES.map(([path, page]) => (
            <Route key={path} path={path} component={pages[page]} />
          ))}
          <Route component={pages.notFound} />
        </Switch>
      </Suspense>
    </Shell>
  );
}
