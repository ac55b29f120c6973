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
interface NunjucksCompiler {
  compile(node: AstNode): void;
  getCode(): string;
  _getNodeName(node: AstNode): string;
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
  compiler: { Compiler: new (name: string, throwOnUndefined: boolean) => NunjucksCompiler };
  runtime: Record<string, unknown> & {
    suppressValue(val: unknown, autoescape: boolean): unknown;
    /** Text a template marks as its own (`| safe`, a macro's output). */
    SafeString: new (val: string) => { val: string; length: number };
  };
  lib: { TemplateError: new (message: string | Error, lineno?: number, colno?: number) => NunjucksError };
}

/** Longest detail an error carries: messages that quote a value (a filter's argument) stay short. */
const MAX_DETAIL = 1000;
const shorten = (detail: string) => (detail.length > MAX_DETAIL ? `${detail.slice(0, MAX_DETAIL - 1)}…` : detail);

/** A template that does not parse or does not render; line and column are 1-based when known. */
export class TemplateError extends Error {
  override name = 'TemplateError';
  readonly detail: string;
  constructor(
    detail: string,
    readonly line: number | null = null,
    readonly column: number | null = null,
  ) {
    super(line ? `line ${line}${column ? `, column ${column}` : ''}: ${shorten(detail)}` : shorten(detail));
    this.detail = shorten(detail);
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

const transformer = require('nunjucks/src/transformer') as { transform(ast: AstNode, asyncFilters: string[]): AstNode };

/**
 * nunjucks' compiler but for the name it gives a call for its errors (`callWrap(f, "x[\"y\"]", …)`):
 * nunjucks writes the string literals of the called expression into that string with their quotes
 * escaped but not their backslashes, so a literal holding `\"` ended the string and added code.
 * Here those literals lose backslashes, quotes and line breaks (the name is only a label).
 */
class Compiler extends nunjucks.compiler.Compiler {
  override _getNodeName(node: AstNode): string {
    return node.typename === 'Literal' ? String(node.value).replace(/[\\"\r\n\u2028\u2029]/g, '?') : super._getNodeName(node);
  }
}

/** The code of a parsed template, as nunjucks.compiler.compile makes it from a source. */
export function compile(ast: AstNode, asyncFilters: string[]): string {
  const compiler = new Compiler('template', OPTIONS.throwOnUndefined);
  compiler.compile(transformer.transform(ast, asyncFilters));
  return compiler.getCode();
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
