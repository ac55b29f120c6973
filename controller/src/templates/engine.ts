import { createRequire } from 'node:module';

/**
 * The template engine: nunjucks (Jinja-style syntax) behind a sandbox.
 *
 * Stock nunjucks compiles templates to JavaScript that can walk from any value to
 * `Function` (`{{ range.constructor("return process")() }}`). Here every compiled template runs
 * with its own runtime whose attribute lookups see only a value's own data (plus a short list of
 * harmless string and array methods), never functions' attributes, prototypes or constructors;
 * names resolve only to the caller's variables and the three nunjucks globals; calls and loop
 * iterations are counted against a budget and output size is capped. There is no loader, so
 * include, import and extends cannot read files. Regular-expression literals are refused (no
 * catastrophic backtracking). Autoescape is off: configs are not HTML.
 *
 * This module is pure and synchronous; `render-pool.ts` runs it in worker threads with time and
 * memory limits so that no template can stall or exhaust the controller.
 */

const require = createRequire(import.meta.url);
// nunjucks' parser, node classes, compiler and runtime are not in its type definitions.
const nunjucks = require('nunjucks') as NunjucksInternals;

interface AstNode {
  typename: string;
  lineno: number;
  colno: number;
  fields: string[];
  children?: AstNode[];
  value?: unknown;
  [field: string]: unknown;
}
interface NunjucksError extends Error {
  lineno?: number;
  colno?: number;
  cause?: Error;
}
interface NunjucksEnvironment {
  opts: Record<string, unknown>;
  globals: Record<string, unknown>;
  filters: Record<string, unknown>;
  tests: Record<string, unknown>;
  asyncFilters: string[];
  extensionsList: unknown[];
  addGlobal(name: string, value: unknown): void;
}
type RootFn = (env: unknown, context: unknown, frame: unknown, runtime: unknown, cb: (err: unknown, res?: string) => void) => void;
interface NunjucksInternals {
  Environment: new (loaders: unknown[], opts: Record<string, unknown>) => NunjucksEnvironment;
  Template: new (src: { type: 'code'; obj: Record<string, unknown> }, env: NunjucksEnvironment, path: string, eager: boolean) => { render(ctx: object): string };
  parser: { parse(src: string, extensions: unknown[], opts: Record<string, unknown>): AstNode };
  compiler: { compile(src: string, asyncFilters: string[], extensions: unknown[], name: string, opts: Record<string, unknown>): string };
  runtime: Record<string, unknown> & { suppressValue(val: unknown, autoescape: boolean): unknown };
  lib: { TemplateError: new (message: string | Error, lineno?: number, colno?: number) => NunjucksError };
}

export type VariableType = 'string' | 'number' | 'boolean' | 'list' | 'object';
export interface TemplateVariable {
  name: string;
  type: VariableType;
  required: boolean;
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

/** Limits of one render; the worker's time and memory limits back them up. */
export const RENDER_LIMITS = {
  /** Loop iterations plus function and macro calls. */
  steps: 250_000,
  /** Characters written through {{ }} expressions. */
  outputChars: 8 * 1024 * 1024,
  /** Longest list range() builds. */
  rangeLength: 100_000,
};

/** Names no template may read, as a variable or as an attribute. */
const BLOCKED = new Set([
  'constructor', '__proto__', 'prototype', '__defineGetter__', '__defineSetter__', '__lookupGetter__',
  '__lookupSetter__', 'caller', 'callee', 'arguments', 'apply', 'call', 'bind', 'valueOf', 'toString',
  'toLocaleString', 'hasOwnProperty', 'isPrototypeOf', 'propertyIsEnumerable',
]);
/** The only methods reachable on values; none can build code, regular expressions or huge strings. */
const STRING_METHODS = new Set([
  'toUpperCase', 'toLowerCase', 'trim', 'trimStart', 'trimEnd', 'startsWith', 'endsWith', 'includes',
  'indexOf', 'lastIndexOf', 'split', 'replace', 'replaceAll', 'slice', 'substring', 'charAt',
]);
const ARRAY_METHODS = new Set(['join', 'includes', 'indexOf', 'lastIndexOf', 'slice', 'concat']);
const UNCALLABLE = new Set<unknown>([
  Function, eval, setTimeout, setInterval, setImmediate, queueMicrotask,
  Object.getPrototypeOf(async () => undefined).constructor,
  Object.getPrototypeOf(function* gen() { /* generator */ }).constructor,
]);
const GLOBALS = new Set(['range', 'cycler', 'joiner']);

const OPTIONS = { autoescape: false, throwOnUndefined: true, trimBlocks: true, lstripBlocks: true, dev: true };

/** Backstop behind the syntax check: there is nothing to load. */
const noLoader = {
  getSource(name: string): never {
    throw new Error(`templates cannot include, import or extend other templates ("${name}")`);
  },
};

function createEnvironment(): NunjucksEnvironment {
  const env = new nunjucks.Environment([noLoader], OPTIONS);
  env.addGlobal('range', (start: number, stop?: number, step = 1) => {
    if (stop === undefined) [start, stop] = [0, start];
    if (typeof start !== 'number' || typeof stop !== 'number' || typeof step !== 'number' || !step) throw new Error('range() needs numbers and a non-zero step');
    const length = Math.max(0, Math.ceil((stop - start) / step));
    if (length > RENDER_LIMITS.rangeLength) throw new Error(`range() of ${length} items is over the limit of ${RENDER_LIMITS.rangeLength}`);
    return Array.from({ length }, (_, i) => start + i * step);
  });
  return env;
}

const env = createEnvironment();

// ---------------------------------------------------------------------------------------------
// Syntax: parse, check, derive variables.

function position(node: AstNode): [number, number] {
  return [node.lineno + 1, node.colno + 1];
}

function toTemplateError(err: unknown): TemplateError {
  if (err instanceof TemplateError) return err;
  const e = err as NunjucksError;
  const cause = e?.cause instanceof Error ? e.cause : null;
  let detail = cause ? cause.message : String(e?.message ?? err).split('\n').pop()!.trim();
  if (cause instanceof RangeError && /call stack/i.test(cause.message)) detail = 'recursion is too deep';
  detail = detail.replace(/^(Template render )?Error: /, '');
  const line = typeof e?.lineno === 'number' ? e.lineno : null;
  const column = typeof e?.colno === 'number' ? e.colno : null;
  return new TemplateError(detail, line || null, column || null);
}

function parse(source: string): AstNode {
  try {
    return nunjucks.parser.parse(source, [], OPTIONS);
  } catch (err) {
    const error = toTemplateError(err);
    // The parser gives no position when the source ends early: the last line is where.
    if (error.line === null && /end of file/.test(error.detail)) throw new TemplateError(error.detail, source.split('\n').length);
    throw error;
  }
}

const isNode = (value: unknown): value is AstNode => typeof value === 'object' && value !== null && 'typename' in value && 'lineno' in value;

function childrenOf(node: AstNode): AstNode[] {
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

/** Refuses what the sandbox would refuse anyway, with the exact line: a clearer message. */
function check(node: AstNode): void {
  const fail = (detail: string): never => {
    throw new TemplateError(detail, ...position(node));
  };
  switch (node.typename) {
    case 'Include':
    case 'Import':
    case 'FromImport':
    case 'Extends':
      fail('templates cannot include, import or extend other templates');
      break;
    case 'Literal':
      if (node.value instanceof RegExp) fail('regular expression literals are not allowed in templates');
      break;
    case 'Symbol':
      if (BLOCKED.has(String(node.value))) fail(`'${String(node.value)}' is not accessible in templates`);
      break;
    case 'LookupVal': {
      const val = node.val as AstNode;
      if (val.typename === 'Literal' && BLOCKED.has(String(val.value))) fail(`attribute '${String(val.value)}' is not accessible in templates`);
      break;
    }
    case 'Filter':
    case 'FilterAsync': {
      const name = String((node.name as AstNode).value);
      if (!Object.hasOwn(env.filters, name)) fail(`unknown filter '${name}'`);
      break;
    }
    case 'Is': {
      const right = node.right as AstNode;
      const test = right.typename === 'FunCall' ? (right.name as AstNode).value : right.value;
      if (!Object.hasOwn(env.tests, String(test))) fail(`unknown test '${String(test)}'`);
      break;
    }
  }
  for (const child of childrenOf(node)) check(child);
}

type Role = 'value' | 'iter' | 'lookup' | 'number' | 'list' | 'object' | 'cond';
interface Mode {
  optional: boolean;
  cond: boolean;
}
const LIST_FILTERS = new Set(['join', 'sort', 'batch', 'first', 'last', 'selectattr', 'rejectattr', 'select', 'reject', 'groupby', 'sum', 'slice']);
const NUMBER_OPS = new Set(['Sub', 'Mul', 'Div', 'FloorDiv', 'Mod', 'Pow', 'Neg', 'Pos']);
const TYPE_ORDER: VariableType[] = ['list', 'object', 'number', 'string', 'boolean'];

/**
 * Walks the syntax tree collecting free names (not set, looped or macro arguments). A name is
 * required when at least one use would fail or do nothing without it: not under `| default`,
 * not inside `x is defined` or an if condition, and not inside an if whose condition proves it
 * defined (`{% if x %}`, `{% if x is defined %}`, the else branch of `{% if x is undefined %}`).
 */
class VariableCollector {
  private readonly found = new Map<string, { roles: Set<Role>; required: boolean }>();
  private readonly scopes: Set<string>[] = [new Set()];
  private readonly guards: Set<string>[] = [];

  result(): TemplateVariable[] {
    return [...this.found].map(([name, info]) => {
      const roles = info.roles;
      let type: VariableType = 'boolean';
      if (roles.has('iter') || roles.has('list')) type = 'list';
      else if (roles.has('lookup') || roles.has('object')) type = 'object';
      else if (roles.has('number')) type = 'number';
      else if (roles.has('value')) type = 'string';
      return { name, type: TYPE_ORDER.includes(type) ? type : 'string', required: info.required };
    });
  }

  private bound(name: string): boolean {
    return this.scopes.some((scope) => scope.has(name));
  }

  private bind(target: unknown): void {
    if (Array.isArray(target)) target.forEach((t) => this.bind(t));
    else if (isNode(target)) {
      if (target.typename === 'Symbol') this.scopes[this.scopes.length - 1].add(String(target.value));
      else if (target.children) this.bind(target.children);
    }
  }

  private use(name: string, role: Role, mode: Mode): void {
    if (this.bound(name) || GLOBALS.has(name) || BLOCKED.has(name)) return;
    const info = this.found.get(name) ?? { roles: new Set<Role>(), required: false };
    this.found.set(name, info);
    const guarded = this.guards.some((g) => g.has(name));
    info.roles.add(mode.cond && role === 'value' ? 'cond' : role);
    if (!mode.optional && !mode.cond && !guarded) info.required = true;
  }

  /** Names a true condition proves defined. */
  private provenIfTrue(cond: AstNode): Set<string> {
    const out = new Set<string>();
    const root = (n: AstNode): string | null => (n.typename === 'Symbol' ? String(n.value) : n.typename === 'LookupVal' ? root(n.target as AstNode) : null);
    const walk = (n: AstNode) => {
      if (n.typename === 'Symbol' || n.typename === 'LookupVal') {
        const name = root(n);
        if (name) out.add(name);
      } else if (n.typename === 'Is' && (n.right as AstNode).value === 'defined') {
        const name = root(n.left as AstNode);
        if (name) out.add(name);
      } else if (n.typename === 'And') {
        walk(n.left as AstNode);
        walk(n.right as AstNode);
      } else if (n.typename === 'Not') {
        for (const name of this.provenIfFalse(n.target as AstNode)) out.add(name);
      } else if (n.typename === 'Group' && n.children?.length === 1) walk(n.children[0]);
    };
    walk(cond);
    return out;
  }

  /** Names a false condition proves defined. */
  private provenIfFalse(cond: AstNode): Set<string> {
    const out = new Set<string>();
    const walk = (n: AstNode) => {
      if (n.typename === 'Is' && (n.right as AstNode).value === 'undefined' && (n.left as AstNode).typename === 'Symbol') out.add(String((n.left as AstNode).value));
      else if (n.typename === 'Or') {
        walk(n.left as AstNode);
        walk(n.right as AstNode);
      } else if (n.typename === 'Not') {
        for (const name of this.provenIfTrue(n.target as AstNode)) out.add(name);
      } else if (n.typename === 'Group' && n.children?.length === 1) walk(n.children[0]);
    };
    walk(cond);
    return out;
  }

  private guarded(names: Set<string>, fn: () => void): void {
    this.guards.push(names);
    try {
      fn();
    } finally {
      this.guards.pop();
    }
  }

  private scoped(fn: () => void): void {
    this.scopes.push(new Set());
    try {
      fn();
    } finally {
      this.scopes.pop();
    }
  }

  visit(node: unknown, mode: Mode = { optional: false, cond: false }, role: Role = 'value'): void {
    if (Array.isArray(node)) {
      for (const n of node) this.visit(n, mode, role);
      return;
    }
    if (!isNode(node)) return;
    const n = node;
    const condMode = { optional: true, cond: true };
    switch (n.typename) {
      case 'Symbol':
        this.use(String(n.value), role, mode);
        return;
      case 'Literal':
      case 'TemplateData':
        return;
      case 'LookupVal':
        this.visit(n.target, mode, 'lookup');
        this.visit(n.val, mode);
        return;
      case 'FunCall':
        if ((n.name as AstNode).typename !== 'Symbol') this.visit(n.name, mode);
        this.visit(n.args, mode);
        return;
      case 'Filter':
      case 'FilterAsync': {
        const name = String((n.name as AstNode).value);
        const [first, ...rest] = (n.args as AstNode).children ?? [];
        const firstRole: Role = LIST_FILTERS.has(name) ? 'list' : name === 'dictsort' ? 'object' : role;
        this.visit(first, name === 'default' || name === 'd' ? { ...mode, optional: true } : mode, firstRole);
        this.visit(rest, mode);
        return;
      }
      case 'Is': {
        this.visit(n.left, { ...mode, optional: true });
        // The right side names a test; only a call's arguments hold expressions.
        const right = n.right as AstNode;
        if (right.typename === 'FunCall') this.visit(right.args, mode);
        return;
      }
      case 'Or':
        this.visit(n.left, { ...mode, optional: true });
        this.visit(n.right, mode, role);
        return;
      case 'If':
      case 'InlineIf':
      case 'IfAsync': {
        const cond = n.cond as AstNode;
        this.visit(cond, condMode);
        this.guarded(this.provenIfTrue(cond), () => this.visit(n.body, mode, role));
        this.guarded(this.provenIfFalse(cond), () => this.visit(n.else_, mode, role));
        return;
      }
      case 'For':
      case 'AsyncEach':
      case 'AsyncAll':
        this.visit(n.arr, mode, 'iter');
        this.scoped(() => {
          this.bind(n.name);
          this.scopes[this.scopes.length - 1].add('loop');
          this.visit(n.body, mode);
        });
        this.visit(n.else_, mode);
        return;
      case 'Macro':
      case 'Caller': {
        if (n.typename === 'Macro') this.bind(n.name);
        const args = (n.args as AstNode).children ?? [];
        for (const arg of args) if (arg.typename === 'KeywordArgs') for (const pair of arg.children ?? []) this.visit(pair.value, mode);
        this.scoped(() => {
          for (const arg of args) {
            if (arg.typename === 'KeywordArgs') for (const pair of arg.children ?? []) this.bind(pair.key);
            else this.bind(arg);
          }
          this.scopes[this.scopes.length - 1].add('caller');
          this.visit(n.body, mode);
        });
        return;
      }
      case 'Set':
        this.visit(n.value, mode);
        this.visit(n.body, mode);
        this.bind(n.targets);
        return;
      case 'Pair':
        // Keys of dict literals and keyword arguments are names, not variables.
        if ((n.key as AstNode).typename !== 'Symbol') this.visit(n.key, mode);
        this.visit(n.value, mode);
        return;
      default:
        if (NUMBER_OPS.has(n.typename)) {
          for (const child of childrenOf(n)) this.visit(child, mode, child.typename === 'Symbol' ? 'number' : 'value');
          return;
        }
        for (const child of childrenOf(n)) this.visit(child, mode);
    }
  }
}

/** Parses and checks a template; its variables, or the syntax error with its line. */
export function analyzeTemplate(source: string): { variables: TemplateVariable[]; error: TemplateError | null } {
  try {
    const ast = parse(source);
    check(ast);
    const collector = new VariableCollector();
    collector.visit(ast);
    return { variables: collector.result(), error: null };
  } catch (err) {
    return { variables: [], error: toTemplateError(err) };
  }
}

// ---------------------------------------------------------------------------------------------
// Compile and render.

interface Budget {
  steps: number;
  output: number;
}

function isIndex(key: unknown): boolean {
  return typeof key === 'number' ? Number.isInteger(key) : typeof key === 'string' && /^\d+$/.test(key);
}

function makeRuntime(budget: Budget): Record<string, unknown> {
  const base = nunjucks.runtime;
  const spend = (n: number) => {
    budget.steps += n;
    if (budget.steps > RENDER_LIMITS.steps) throw new Error(`the template did more than ${RENDER_LIMITS.steps} loop iterations and calls`);
  };
  const bindMethod = (obj: unknown, fn: (...args: unknown[]) => unknown) => (...args: unknown[]) => fn.apply(obj, args);
  return {
    ...base,
    memberLookup(obj: unknown, key: unknown): unknown {
      if (obj === undefined || obj === null) return undefined;
      const name = String(key);
      if (BLOCKED.has(name)) throw new Error(`attribute '${name}' is not accessible in templates`);
      if (typeof obj === 'function') throw new Error(`attributes of functions are not accessible in templates`);
      if (typeof obj === 'string') {
        if (name === 'length') return obj.length;
        if (isIndex(key)) return obj[Number(key)];
        if (STRING_METHODS.has(name)) return bindMethod(obj, (String.prototype as unknown as Record<string, (...a: unknown[]) => unknown>)[name]);
        return undefined;
      }
      if (Array.isArray(obj)) {
        if (name === 'length') return obj.length;
        if (isIndex(key)) return obj[Number(key)];
        if (ARRAY_METHODS.has(name)) return bindMethod(obj, (Array.prototype as unknown as Record<string, (...a: unknown[]) => unknown>)[name]);
        return undefined;
      }
      if (typeof obj === 'object' && Object.hasOwn(obj, name)) {
        const value = (obj as Record<string, unknown>)[name];
        return typeof value === 'function' ? bindMethod(obj, value as (...a: unknown[]) => unknown) : value;
      }
      return undefined;
    },
    contextOrFrameLookup(context: { ctx: Record<string, unknown>; env: NunjucksEnvironment }, frame: { lookup(name: string): unknown }, name: string): unknown {
      if (BLOCKED.has(name)) throw new Error(`'${name}' is not accessible in templates`);
      const value = frame.lookup(name);
      if (value !== undefined) return value;
      if (Object.hasOwn(context.ctx, name)) return context.ctx[name];
      if (Object.hasOwn(context.env.globals, name)) return context.env.globals[name];
      return undefined;
    },
    callWrap(fn: unknown, name: string, context: unknown, args: unknown[]): unknown {
      spend(1);
      if (typeof fn !== 'function') throw new Error(`'${name}' is not a function`);
      if (UNCALLABLE.has(fn)) throw new Error(`'${name}' cannot be called from a template`);
      return (fn as (...a: unknown[]) => unknown).apply(context, args);
    },
    fromIterator(value: unknown): unknown {
      const out = (base.fromIterator as (v: unknown) => unknown)(value);
      if (Array.isArray(out) || typeof out === 'string') spend(out.length);
      else if (out && typeof out === 'object') spend(Object.keys(out).length);
      return out;
    },
    suppressValue(value: unknown, autoescape: boolean): unknown {
      const out = base.suppressValue(value, autoescape);
      budget.output += typeof out === 'string' ? out.length : 16;
      if (budget.output > RENDER_LIMITS.outputChars) throw new Error(`the output is larger than ${RENDER_LIMITS.outputChars} characters`);
      return out;
    },
    handleError(error: NunjucksError, lineno: number, colno: number): NunjucksError {
      if (error && typeof error === 'object' && error.lineno) return error;
      // The compiled code tracks 0-based positions; 0/0 means none was reached yet.
      if (!lineno && !colno) return new nunjucks.lib.TemplateError(error);
      return new nunjucks.lib.TemplateError(error, lineno + 1, colno + 1);
    },
  };
}

export interface CompiledTemplate {
  readonly variables: TemplateVariable[];
  render(variables: Record<string, unknown>): string;
}

const UNDEFINED_OUTPUT = 'attempted to output null or undefined value';

/** Names the required variables the caller left out when an undefined value reached the output. */
function explain(error: TemplateError, variables: TemplateVariable[], given: Record<string, unknown>): TemplateError {
  if (error.detail !== UNDEFINED_OUTPUT) return error;
  const missing = variables.filter((v) => v.required && (given[v.name] === undefined || given[v.name] === null)).map((v) => v.name);
  const detail = missing.length
    ? `undefined value: variable${missing.length > 1 ? 's' : ''} ${missing.map((m) => `'${m}'`).join(', ')} not provided`
    : 'undefined or null value in the output (an attribute that does not exist, or a null variable)';
  return new TemplateError(detail, error.line, error.column);
}

const cache = new Map<string, CompiledTemplate>();
const CACHE_SIZE = 500;

/** Parses, checks and compiles a template (cached by source); throws TemplateError. */
export function compileTemplate(source: string): CompiledTemplate {
  const hit = cache.get(source);
  if (hit) {
    cache.delete(source);
    cache.set(source, hit);
    return hit;
  }
  const ast = parse(source);
  check(ast);
  const collector = new VariableCollector();
  collector.visit(ast);
  const variables = collector.result();
  let props: Record<string, unknown>;
  try {
    const code = nunjucks.compiler.compile(source, env.asyncFilters, env.extensionsList, 'template', env.opts);
    props = new Function(code)() as Record<string, unknown>;
  } catch (err) {
    throw toTemplateError(err);
  }
  let budget: Budget = { steps: 0, output: 0 };
  const root = props.root as RootFn;
  // The compiled code gets the sandboxed runtime instead of nunjucks' own; blocks and macros
  // receive it from root.
  props.root = ((e, context, frame, _runtime, cb) => root(e, context, frame, makeRuntime(budget), cb)) as RootFn;
  const template = new nunjucks.Template({ type: 'code', obj: props }, env, 'template', true);
  const compiled: CompiledTemplate = {
    variables,
    render(given) {
      budget = { steps: 0, output: 0 };
      const ctx: Record<string, unknown> = Object.create(null);
      for (const [key, value] of Object.entries(given)) if (!BLOCKED.has(key)) ctx[key] = value;
      try {
        return template.render(ctx);
      } catch (err) {
        throw explain(toTemplateError(err), variables, given);
      }
    },
  };
  cache.set(source, compiled);
  if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value as string);
  return compiled;
}

/** Renders a template source with variables; throws TemplateError with line and cause. */
export function renderTemplate(source: string, variables: Record<string, unknown>): string {
  return compileTemplate(source).render(variables);
}
