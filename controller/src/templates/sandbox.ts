/**
 * The sandbox every template renders in. Stock nunjucks compiles templates to JavaScript that can
 * walk from any value to `Function` (`{{ range.constructor("return process")() }}`). Here every
 * compiled template runs with its own runtime whose attribute lookups see only a value's own data
 * (plus a short list of harmless string and array methods), never functions' attributes,
 * prototypes or constructors; names resolve only to the caller's variables and the three nunjucks
 * globals; calls and loop iterations are counted against a budget and output size is capped.
 * There is no loader, so include, import and extends cannot read files. Regular-expression
 * literals are refused (no catastrophic backtracking).
 */
import { OPTIONS, TemplateError, childrenOf, nunjucks, position, type AstNode, type NunjucksEnvironment, type NunjucksError } from './syntax';

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
export const BLOCKED = new Set([
  'constructor',
  '__proto__',
  'prototype',
  '__defineGetter__',
  '__defineSetter__',
  '__lookupGetter__',
  '__lookupSetter__',
  'caller',
  'callee',
  'arguments',
  'apply',
  'call',
  'bind',
  'valueOf',
  'toString',
  'toLocaleString',
  'hasOwnProperty',
  'isPrototypeOf',
  'propertyIsEnumerable',
]);
/** The only methods reachable on values; none can build code, regular expressions or huge strings. */
const STRING_METHODS = new Set([
  'toUpperCase',
  'toLowerCase',
  'trim',
  'trimStart',
  'trimEnd',
  'startsWith',
  'endsWith',
  'includes',
  'indexOf',
  'lastIndexOf',
  'split',
  'replace',
  'replaceAll',
  'slice',
  'substring',
  'charAt',
]);
const ARRAY_METHODS = new Set(['join', 'includes', 'indexOf', 'lastIndexOf', 'slice', 'concat']);
const UNCALLABLE = new Set<unknown>([
  Function,
  eval,
  setTimeout,
  setInterval,
  setImmediate,
  queueMicrotask,
  Object.getPrototypeOf(async () => undefined).constructor,
  Object.getPrototypeOf(function* gen() {
    /* generator */
  }).constructor,
]);
/** The nunjucks globals templates may use. */
export const GLOBALS = new Set(['range', 'cycler', 'joiner']);

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
    if (typeof start !== 'number' || typeof stop !== 'number' || typeof step !== 'number' || !step)
      throw new Error('range() needs numbers and a non-zero step');
    const length = Math.max(0, Math.ceil((stop - start) / step));
    if (length > RENDER_LIMITS.rangeLength) throw new Error(`range() of ${length} items is over the limit of ${RENDER_LIMITS.rangeLength}`);
    return Array.from({ length }, (_, i) => start + i * step);
  });
  return env;
}

/** The one environment: no loader, a bounded range(). */
export const env = createEnvironment();

/** Refuses what the sandbox would refuse anyway, with the exact line: a clearer message. */
export function check(node: AstNode): void {
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

export interface Budget {
  steps: number;
  output: number;
}

function isIndex(key: unknown): boolean {
  return typeof key === 'number' ? Number.isInteger(key) : typeof key === 'string' && /^\d+$/.test(key);
}

/** nunjucks' runtime with every lookup, call and write checked and counted against `budget`. */
export function makeRuntime(budget: Budget): Record<string, unknown> {
  const base = nunjucks.runtime;
  const spend = (n: number) => {
    budget.steps += n;
    if (budget.steps > RENDER_LIMITS.steps) throw new Error(`the template did more than ${RENDER_LIMITS.steps} loop iterations and calls`);
  };
  const bindMethod =
    (obj: unknown, fn: (...args: unknown[]) => unknown) =>
    (...args: unknown[]) =>
      fn.apply(obj, args);
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
    contextOrFrameLookup(
      context: { ctx: Record<string, unknown>; env: NunjucksEnvironment },
      frame: { lookup(name: string): unknown },
      name: string,
    ): unknown {
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
