import type { QueryClient } from '@tanstack/query-core';
import { loading } from '../components/Loading';
import Overview from '../pages/Overview';
import { lazyPage, type LazyPage } from './lazy-page';
import { preloadData } from './queries';

/**
 * The home page, small, is part of the main bundle: the first load of / renders as soon as its data
 * is there, without a second round of requests for its code.
 */
const overview: LazyPage<object> = Object.assign(Overview, { preload: () => Promise.resolve({ default: Overview }) });

// Every other page is its own chunk: the first load carries only the shell and the page asked for.
export const pages = {
  overview,
  agents: lazyPage(() => import('../pages/Agents'), loading),
  devices: lazyPage(() => import('../pages/Devices'), loading),
  device: lazyPage(() => import('../pages/Device'), loading),
  snapshots: lazyPage(() => import('../pages/Snapshots'), loading),
  topology: lazyPage(() => import('../pages/Topology'), loading),
  templates: lazyPage(() => import('../pages/Templates'), loading),
  stacks: lazyPage(() => import('../pages/Stacks'), loading),
  deployments: lazyPage(() => import('../pages/Deployments'), loading),
  deployment: lazyPage(() => import('../pages/Deployment'), loading),
  instances: lazyPage(() => import('../pages/Instances'), loading),
  tasks: lazyPage(() => import('../pages/Tasks'), loading),
  profiles: lazyPage(() => import('../pages/Profiles'), loading),
  admin: lazyPage(() => import('../pages/Admin'), loading),
  notFound: lazyPage(() => import('../pages/NotFound'), loading),
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
  ['/profiles', 'profiles'],
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

/** Starts a route's code and data before the page asks (on hover, focus, or the first load), so its render waits on neither. */
export function preloadRoute(client: QueryClient, path: string, search = ''): void {
  void pageFor(path.split('?')[0]).preload();
  preloadData(client, path, search);
}
