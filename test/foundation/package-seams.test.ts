/**
 * The seams between the three packages: the controller never reaches into agent internals (only
 * the all-in-one composition file that starts the built-in agent may), and shared code depends
 * on neither side. Every import and re-export (static or dynamic) of every source file is read.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..');

/** Controller files allowed to import from agent/: the built-in agent's composition file. */
const CONTROLLER_MAY_IMPORT_AGENT = new Set(['controller/src/builtin-agent.ts']);

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ts|tsx|mts|cts)$/.test(e.name) && !e.parentPath.includes('node_modules'))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
}

const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)['"]([^'"]+)['"]/g;

/** The repository-relative paths a file imports (relative specifiers only; packages are not ours). */
function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  return [...text.matchAll(SPECIFIER)]
    .map((m) => m[1])
    .filter((s) => s.startsWith('.'))
    .map((s) => relative(ROOT, resolve(ROOT, dirname(file), s)));
}

/** Every `file → import` under `dir` that lands in one of `forbidden` (top-level folders). */
function crossings(dir: string, forbidden: string[], allowed: ReadonlySet<string> = new Set()): string[] {
  return sourceFiles(dir)
    .filter((file) => !allowed.has(file))
    .flatMap((file) =>
      importsOf(file)
        .filter((target) => forbidden.some((f) => target === f || target.startsWith(`${f}/`)))
        .map((target) => `${file} → ${target}`),
    );
}

/** The controller's area folders (controller/src/<area>/…) and which areas each imports. */
function areaGraph(): Map<string, Set<string>> {
  const areaOf = (path: string) => /^controller\/src\/([^/]+)\//.exec(path)?.[1];
  const graph = new Map<string, Set<string>>();
  for (const file of sourceFiles('controller/src')) {
    const from = areaOf(file);
    if (!from) continue;
    for (const to of importsOf(file).map(areaOf)) {
      if (to && to !== from) graph.set(from, (graph.get(from) ?? new Set()).add(to));
    }
  }
  return graph;
}

/** Every cycle's areas, found by depth-first search (each cycle once, from its smallest name). */
function cycles(graph: Map<string, Set<string>>): string[][] {
  const found: string[][] = [];
  const walk = (start: string, at: string, path: string[]) => {
    for (const next of graph.get(at) ?? []) {
      if (next === start) found.push([...path, start]);
      else if (next > start && !path.includes(next)) walk(start, next, [...path, next]);
    }
  };
  for (const area of [...graph.keys()].sort()) walk(area, area, [area]);
  return found;
}

describe('package seams', () => {
  it('finds the files and their imports it checks', () => {
    expect(sourceFiles('controller/src').length).toBeGreaterThan(50);
    expect(importsOf('controller/src/jobs/engine.ts')).toContain('shared/src/jobs/kinds');
  });

  it('the controller imports nothing from agent/ outside the built-in agent composition file', () => {
    expect(crossings('controller/src', ['agent'], CONTROLLER_MAY_IMPORT_AGENT)).toEqual([]);
  });

  it('shared code imports nothing from controller/ or agent/', () => {
    expect(crossings('shared/src', ['controller', 'agent'])).toEqual([]);
  });

  it('no two areas of the controller depend on each other, directly or through others', () => {
    const graph = areaGraph();
    expect(graph.get('configs')).toContain('jobs');
    expect(cycles(graph).map((c) => c.join(' → '))).toEqual([]);
  });

  it('the job engine reaches other areas only through its ports (jobs/ports.ts)', () => {
    expect([...(areaGraph().get('jobs') ?? [])].sort()).toEqual(['db', 'errors', 'platform']);
  });

  it('would catch a cycle', () => {
    const graph = new Map([
      ['a', new Set(['b'])],
      ['b', new Set(['c'])],
      ['c', new Set(['a'])],
    ]);
    expect(cycles(graph)).toEqual([['a', 'b', 'c', 'a']]);
  });

  it('would catch a crossing', () => {
    expect(crossings('agent/src', ['shared']).length).toBeGreaterThan(0);
  });
});
