import { lazyPage } from './lazy-page';

// Each page is its own chunk: the first load carries only the shell and the page asked for.
export const pages = {
  overview: lazyPage(() => import('../pages/Overview')),
  agents: lazyPage(() => import('../pages/Agents')),
  devices: lazyPage(() => import('../pages/Devices')),
  device: lazyPage(() => import('../pages/Device')),
  snapshots: lazyPage(() => import('../pages/Snapshots')),
  topology: lazyPage(() => import('../pages/Topology')),
  templates: lazyPage(() => import('../pages/Templates')),
  stacks: lazyPage(() => import('../pages/Stacks')),
  deployments: lazyPage(() => import('../pages/Deployments')),
  deployment: lazyPage(() => import('../pages/Deployment')),
  instances: lazyPage(() => import('../pages/Instances')),
  tasks: lazyPage(() => import('../pages/Tasks')),
  admin: lazyPage(() => import('../pages/Admin')),
  notFound: lazyPage(() => import('../pages/NotFound')),
};

type PageName = keyof typeof pages;

/** The routes in the order they are matched: a fixed path, or a pattern with the page's :id. */
export const ROUTES: [path: string, page: PageName][] = [
  ['/', 'overview'],
  ['/agents', 'agents'],
  ['/devices', 'devices'],
  ['/devices/:id', 'device'],
  ['/snapshots', 'snapshots'],
  ['/topology', 'topology'],
  ['/templates', 'templates'],
  ['/stacks', 'stacks'],
  ['/deployments', 'deployments'],
  ['/deployments/:id', 'deployment'],
  ['/instances', 'instances'],
  ['/tasks', 'tasks'],
  ['/admin', 'admin'],
];

/** The page a path shows (wouter matches the same patterns in App). */
export function pageFor(pathname: string): (typeof pages)[PageName] {
  for (const [path, page] of ROUTES) {
    const pattern = new RegExp(`^${path.replace(':id', '[^/]+')}/?$`);
    if (pattern.test(pathname)) return pages[page];
  }
  return pages.notFound;
}
