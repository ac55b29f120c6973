import { Center, Loader } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { lazy, Suspense, useEffect } from 'react';
import { Route, Switch } from 'wouter';
import { useSession } from './auth/use-session';
import { Shell } from './components/Shell';
import { preloadRoute } from './lib/queries';
import { SignIn } from './pages/SignIn';

// Each page is its own chunk: the first load carries only the shell and the page asked for.
const Overview = lazy(() => import('./pages/Overview'));
const Agents = lazy(() => import('./pages/Agents'));
const Devices = lazy(() => import('./pages/Devices'));
const Device = lazy(() => import('./pages/Device'));
const Snapshots = lazy(() => import('./pages/Snapshots'));
const Topology = lazy(() => import('./pages/Topology'));
const Templates = lazy(() => import('./pages/Templates'));
const Stacks = lazy(() => import('./pages/Stacks'));
const Deployments = lazy(() => import('./pages/Deployments'));
const Deployment = lazy(() => import('./pages/Deployment'));
const Instances = lazy(() => import('./pages/Instances'));
const Tasks = lazy(() => import('./pages/Tasks'));
const Admin = lazy(() => import('./pages/Admin'));
const NotFound = lazy(() => import('./pages/NotFound'));

const loading = (
  <Center h={200}>
    <Loader aria-label="Loading" />
  </Center>
);

/**
 * On sign-in, asks for the first page's data at once, in parallel with its code (not after it).
 * Then, once no request is in flight (so it never holds a connection the first page needs),
 * fetches the busiest pages' code, so moving to them waits on data only.
 */
function usePrefetch(enabled: boolean): void {
  const client = useQueryClient();
  useEffect(() => {
    if (!enabled) return;
    preloadRoute(client, location.pathname, location.search);
    let timer: ReturnType<typeof setTimeout>;
    const idle = () => {
      if (client.isFetching() > 0) {
        timer = setTimeout(idle, 250);
        return;
      }
      void import('./pages/Devices');
      void import('./pages/Device');
      void import('./pages/Agents');
    };
    timer = setTimeout(idle, 500);
    return () => clearTimeout(timer);
  }, [enabled, client]);
}

export function App() {
  const session = useSession();
  usePrefetch(session === 'signed-in');
  if (session === 'checking') return loading;
  if (session === 'signed-out') return <SignIn />;
  return (
    <Shell>
      <Suspense fallback={loading}>
        <Switch>
          <Route path="/" component={Overview} />
          <Route path="/agents" component={Agents} />
          <Route path="/devices" component={Devices} />
          <Route path="/devices/:id" component={Device} />
          <Route path="/snapshots" component={Snapshots} />
          <Route path="/topology" component={Topology} />
          <Route path="/templates" component={Templates} />
          <Route path="/stacks" component={Stacks} />
          <Route path="/deployments" component={Deployments} />
          <Route path="/deployments/:id" component={Deployment} />
          <Route path="/instances" component={Instances} />
          <Route path="/tasks" component={Tasks} />
          <Route path="/admin" component={Admin} />
          <Route component={NotFound} />
        </Switch>
      </Suspense>
    </Shell>
  );
}
