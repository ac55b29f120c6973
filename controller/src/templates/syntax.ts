import { createRequire } from 'node:module';

/**
 * nunjucks as the template engine uses it: its parser, compiler and runtime (which its type
 * definitions leave out), the options every template is parsed and compiled with, the syntax
 * tree's nodes, and errors turned into TemplateError with a 1-based line and column.
 */

const require = createRequire(import.meta.url);
// nunjucks' parser, node classes, compiler and runtime are not in its type definitions.
export const nunjucks = require('nunjucks') as NunjucksInternals;

export interface AstNode {
  typename: string;
  lineno: number;
  colno: number;
  fields: string[];
  children?: AstNode[];
  value?: unknown;
  [field: string]: unknown;
}
export interface NunjucksError extends Error {
  lineno?: number;
  colno?: number;
  cause?: Error;
}
export interface NunjucksEnvironment {
  opts: Record<string, unknown>;
  globals: Record<string, unknown>;
  filters: Record<string, unknown>;
  tests: Record<string, unknown>;
  asyncFilters: string[];
  extensionsList: unknown[];
  addGlobal(name: string, value: unknown): void;
}
export type RootFn = (env: unknown, context: unknown, frame: unknown, runtime: unknown, cb: (err: unknown, res?: string) => void) => void;
interface NunjucksInternals {
  Environment: new (loaders: unknown[], opts: Record<string, unknown>) => NunjucksEnvironment;
  Template: new (
    src: { type: 'code'; obj: Record<string, unknown> },
    env: NunjucksEnvironment,
    path: string,
    eager: boolean,
  ) => { render(ctx: object): string };
  parser: { parse(src: string, extensions: unknown[], opts: Record<string, unknown>): AstNode };
  compiler: { compile(src: string, asyncFilters: string[], extensions: unknown[], name: string, opts: Record<string, unknown>): string };
  runtime: Record<string, unknown> & { suppressValue(val: unknown, autoescape: boolean): unknown };
  lib: { TemplateError: new (message: string | Error, lineno?: number, colno?: number) => NunjucksError };
}

/** A template that does not parse or does not render; line and column are 1-based when known. */
export class TemplateError extends Error {
  override name = 'TemplateError';
  constructor(
    readonly detail: string,
    readonly line: number | null = null,
    readonly column: number | null = null,
  ) {
    super(line ? `line ${line}${column ? `, column ${column}` : ''}: ${detail}` : detail);
  }
}

export const OPTIONS = { autoescape: false, throwOnUndefined: true, trimBlocks: true, lstripBlocks: true, dev: true };

export function position(node: AstNode): [number, number] {
  return [node.lineno + 1, node.colno + 1];
}

export function toTemplateError(err: unknown): TemplateError {
  if (err instanceof TemplateError) return err;
  const e = err as NunjucksError;
  const cause = e?.cause instanceof Error ? e.cause : null;
  let detail = cause
    ? cause.message
    : String(e?.message ?? err)
        .split('\n')
        .pop()!
        .trim();
  if (cause instanceof RangeError && /call stack/i.test(cause.message)) detail = 'recursion is too deep';
  detail = detail.replace(/^(Template render )?Error: /, '');
  const line = typeof e?.lineno === 'number' ? e.lineno : null;
  const column = typeof e?.colno === 'number' ? e.colno : null;
  return new TemplateError(detail, line || null, column || null);
}

export function parse(source: string): AstNode {
  try {
    return nunjucks.parser.parse(source, [], OPTIONS);
  } catch (err) {
    const error = toTemplateError(err);
    // The parser gives no position when the source ends early: the last line is where.
    if (error.line === null && /end of file/.test(error.detail)) throw new TemplateError(error.detail, source.split('\n').length);
    throw error;
  }
}

export const isNode = (value: unknown): value is AstNode => typeof value === 'object' && value !== null && 'typename' in value && 'lineno' in value;

export function childrenOf(node: AstNode): AstNode[] {
  const out: AstNode[] = [];
  const add = (value: unknown) => {
    if (Array.isArray(value)) value.forEach(add);
    else if (isNode(value)) out.push(value);
  };
  if (node.children) add(node.children);
  else for (const field of node.fields) add(node[field]);
  if (node.typename === 'Set' && node.body) add(node.body);
  return out;
}
