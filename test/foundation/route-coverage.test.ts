import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RegisteredRoute } from '../../controller/src/app';
import { startTestController, type TestController } from '../helpers/controller';

/**
 * Every route the server registers must be called by some test. A route counts as called when
 * a test file outside test/helpers (helpers call routes, but a helper is not a test) holds the
 * path as text — `:id` matching any segment such as `${id}`, `' + id + '` or a literal — with
 * the route's method as a quoted word in the same statement ('DELETE', "PUT"; none means GET).
 */

const TEST_ROOT = join(import.meta.dirname, '..');
const NOT_TESTS = ['helpers', 'bench', 'sim'].map((dir) => join(TEST_ROOT, dir));
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return NOT_TESTS.includes(path) || entry.name === 'node_modules' ? [] : sourceFiles(path);
    return /\.(ts|js|mjs)$/.test(entry.name) && path !== import.meta.filename ? [path] : [];
  });
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
// A path parameter as test code writes it: an interpolation, a concatenation or literal text.
const PARAM = String.raw`(?:\$\{[^}]+\}|['"\x60]\s*\+\s*[\w.$()[\]]+\s*\+\s*['"\x60]|[^/\s'"\x60?#$]+)`;

/** Path regex of one route; a parameter never matches a static sibling (/sessions/other is not /sessions/:id). */
function routePattern(route: RegisteredRoute, all: RegisteredRoute[]): RegExp {
  const segments = route.url.split('/');
  const parts = segments.map((segment, i) => {
    if (!segment.startsWith(':')) return escape(segment);
    const prefix = segments.slice(0, i).join('/');
    const siblings = new Set(
      all
        .map((other) => other.url.split('/'))
        .filter((other) => other.length > i && other.slice(0, i).join('/') === prefix && other[i] && !other[i].startsWith(':'))
        .map((other) => other[i]),
    );
    const exclude = [...siblings].map((s) => `${escape(s)}(?:[/'"\x60?#\\s]|$)`).join('|');
    return (exclude ? `(?!${exclude})` : '') + PARAM;
  });
  return new RegExp(`(?<=['"\x60}])${parts.join('/')}(?=$|[?'"\x60#\\s$),])`, 'g');
}

/** The methods named in the statement around a match (GET when none is). */
function methodsAround(text: string, start: number, end: number): Set<string> {
  const from = Math.max(text.lastIndexOf(';', start - 1) + 1, start - 300);
  const next = text.indexOf(';', end);
  const to = Math.min(next === -1 ? text.length : next, end + 300);
  const window = text.slice(from, to);
  const found = new Set<string>();
  for (const match of window.matchAll(/['"\x60](GET|POST|PUT|PATCH|DELETE)['"\x60]/gi)) found.add(match[1].toUpperCase());
  if (found.size === 0) found.add('GET');
  return found;
}

function uncovered(routes: RegisteredRoute[], sources: { file: string; text: string }[]): string[] {
  const missing: string[] = [];
  for (const route of routes) {
    const pattern = routePattern(route, routes);
    const called = sources.some(({ text }) =>
      [...text.matchAll(pattern)].some((match) => methodsAround(text, match.index, match.index + match[0].length).has(route.method)),
    );
    if (!called) missing.push(`${route.method} ${route.url}`);
  }
  return missing;
}

let c: TestController;
beforeAll(async () => {
  c = await startTestController();
});
afterAll(async () => c?.close());

describe('route coverage', () => {
  it('every registered route is called by a test', () => {
    const seen = new Set<string>();
    const routes = c.app.registeredRoutes
      .filter((r) => METHODS.includes(r.method) && !r.url.startsWith('/api/docs'))
      .map((r) => ({ ...r, url: r.url.replace(/(.)\/$/, '$1') }))
      .filter((r) => !seen.has(`${r.method} ${r.url}`) && seen.add(`${r.method} ${r.url}`));
    expect(routes.length).toBeGreaterThan(0);
    const sources = sourceFiles(TEST_ROOT).map((file) => ({ file: relative(TEST_ROOT, file), text: readFileSync(file, 'utf8') }));
    const missing = uncovered(routes, sources);
    expect(missing, `routes no test calls (write a test under test/<area>/ that calls each):\n  ${missing.join('\n  ')}\n`).toEqual([]);
  });

  it('matches paths and methods the way it says', () => {
    const routes: RegisteredRoute[] = [
      { method: 'GET', url: '/api/x/:id', public: false, websocket: false },
      { method: 'DELETE', url: '/api/x/:id', public: false, websocket: false },
      { method: 'DELETE', url: '/api/x/other', public: false, websocket: false },
      { method: 'PUT', url: '/api/x/:id/roles', public: false, websocket: false },
      { method: 'GET', url: '/api/x', public: false, websocket: false },
    ];
    const check = (text: string) => uncovered(routes, [{ file: 't.ts', text }]);
    const all = routes.map((r) => `${r.method} ${r.url}`);
    expect(check('')).toEqual(all);
    expect(check("c.request('GET', `/api/x/${id}`);")).toEqual(all.filter((r) => r !== 'GET /api/x/:id'));
    expect(check("fetch(base + '/api/x/' + id + '/roles', { method: 'PUT' });")).not.toContain('PUT /api/x/:id/roles');
    expect(check("request('PUT', '/api/x/' + user.id + '/roles');")).not.toContain('PUT /api/x/:id/roles');
    // /api/x/other is a static sibling: it does not cover DELETE /api/x/:id.
    expect(check("c.request('DELETE', '/api/x/other');")).toContain('DELETE /api/x/:id');
    expect(check("c.request('DELETE', '/api/x/other');")).not.toContain('DELETE /api/x/other');
    // A longer path does not cover a shorter one, and the method must match.
    expect(check("c.request('GET', `/api/x/${id}/roles`);")).toContain('GET /api/x');
    expect(check("c.request('POST', '/api/x');")).toContain('GET /api/x');
    expect(check('fetch(`${c.url}/api/x?limit=1`);')).not.toContain('GET /api/x');
  });
});
