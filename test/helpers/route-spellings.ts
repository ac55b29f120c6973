import type { RegisteredRoute } from '../../controller/src/app';

const SOME_ID = '7d444840-9dc0-41e6-8b3a-6c1f1f1f1f1f';

/** A concrete path for a route pattern: ids for :params, 1 for versions, x for wildcards. */
export function concretePath(url: string): string {
  return url.replace(/:(\w+)/g, (_m, name: string) => (/version/.test(name) ? '1' : SOME_ID)).replace(/\*/g, 'x');
}

const encodeFirstLetter = (segment: string) => segment.replace(/[a-z]/i, (ch) => `%${ch.charCodeAt(0).toString(16)}`);
const encodeAllLetters = (segment: string) => segment.replace(/[a-z]/gi, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * Ways to write the same path that a router may match while a string test on the raw URL does
 * not: a percent-encoded letter in each static segment, every letter of the first one encoded,
 * upper case, a doubled slash, a trailing slash, an encoded slash and a ';' suffix.
 */
export function spellings(path: string): string[] {
  const segments = path.split('/');
  const variants = new Set<string>([path]);
  segments.forEach((segment, i) => {
    if (!/[a-z]/i.test(segment) || segment.includes('-')) return; // ids are not static segments
    variants.add(segments.map((s, j) => (j === i ? encodeFirstLetter(s) : s)).join('/'));
  });
  if (segments[1]) {
    variants.add(['', encodeAllLetters(segments[1]), ...segments.slice(2)].join('/'));
    variants.add(['', segments[1].toUpperCase(), ...segments.slice(2)].join('/'));
  }
  variants.add(path.replace('/', '//'));
  variants.add(segments.length > 2 ? `/${segments[1]}//${segments.slice(2).join('/')}` : `${path}//`);
  if (!path.endsWith('/')) variants.add(`${path}/`);
  if (segments.length > 2) variants.add(`/${segments[1]}%2F${segments.slice(2).join('/')}`);
  variants.add(`${path};x=1`); // find-my-way reads ';' as the start of the query string
  return [...variants];
}

/** The routes a client can call (HEAD twins of GET routes left out), each once. */
export function callableRoutes(routes: RegisteredRoute[]): RegisteredRoute[] {
  const seen = new Set<string>();
  return routes.filter((r) => r.method !== 'HEAD' && r.method !== 'OPTIONS' && !seen.has(`${r.method} ${r.url}`) && seen.add(`${r.method} ${r.url}`));
}

/** Runs `work` over `items` with at most `limit` running at once. */
export async function eachLimited<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await work(items[next++]);
  });
  await Promise.all(runners);
}
