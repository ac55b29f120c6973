/**
 * The sandbox every template renders in. Stock nunjucks compiles templates to JavaScript that can
 * walk from any value to `Function` (`{{ range.constructor("return process")() }}`). Here every
 * compiled template runs with its own runtime whose attribute lookups see only a value's own data
 * (plus a short list of harmless string and array methods), never functions' attributes,
 * prototypes or constructors; loops and the filters that list an object's properties see it the
 * same way; names resolve only to the caller's variables and the three nunjucks globals, and
 * filters and tests (select("odd")) only to the registered ones; calls get no `this` (never the
 * render's context); calls and loop iterations are counted against a budget and output size is capped.
 * There is no loader, so include, import and extends cannot read files. Regular-expression
 * literals are refused (no catastrophic backtracking), and so are names that are not identifiers
 * (nunjucks pastes names into the code it compiles a template to).
 */
import { dump, writeValue, type RenderFormat } from './output-rules';
import { OPTIONS, TemplateError, childrenOf, nunjucks, position, type AstNode, type NunjucksEnvironment, type NunjucksError } from './syntax';

/** Limits of one render; the worker's time and memory limits back them up. */
export const RENDER_LIMITS = {
  /** Loop iterations plus function and macro calls. */
  steps: 250_000,
  /** Characters of output: {{ }} expressions as they are written, literal text included when the render ends. */
  outputChars: 8 * 1024 * 1024,
  /** Longest list range() builds. */
  rangeLength: 100_000,
  /**
   * Characters of output of one call of many renders (a stack for many devices), all renders
   * together: each batch comes back to the controller's event loop whole, and a few renders
   * each at outputChars would fill its heap (256 MB with `npm run controller`).
   */
  callOutputChars: 64 * 1024 * 1024,
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
/**
 * What a name may be. nunjucks pastes names into the code it compiles a template to
 * (`contextOrFrameLookup(context, frame, "NAME")`, `function (l_NAME)`) and its lexer lets them
 * hold quotes: a name was a way out of the compiled code.
 */
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** The nunjucks globals templates may use. */
export const GLOBALS = new Set(['range', 'cycler', 'joiner']);

export const outputTooLarge = () => `the output is larger than ${RENDER_LIMITS.outputChars} characters`;

type Method = (...args: unknown[]) => unknown;
const bindMethod =
  (obj: unknown, fn: Method): Method =>
  (...args) =>
    fn.apply(obj, args);

/**
 * An object's properties as a template sees them: its own, without blocked names, functions bound
 * to it. Never what it inherits (nunjucks' prototypes are enumerable) nor a raw method that a
 * template could call on an object of its choosing.
 */
function ownView(obj: object): Record<string, unknown> {
  const view: Record<string, unknown> = Object.create(null);
  for (const key of Object.keys(obj)) {
    if (BLOCKED.has(key)) continue;
    const value = (obj as Record<string, unknown>)[key];
    view[key] = typeof value === 'function' ? bindMethod(obj, value as Method) : value;
  }
  return view;
}

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
  // select("name") and reject("name") look a test up by a name given at render time: no table
  // answers with an Object.prototype member (select("__defineGetter__") ran it on the context).
  for (const table of [env.filters, env.tests, env.globals]) Object.setPrototypeOf(table, null);
  // The filters that list an object's properties themselves see it as loops do.
  for (const name of ['dictsort', 'list']) {
    const filter = env.filters[name] as Method;
    env.filters[name] = function (this: unknown, value: unknown, ...rest: unknown[]) {
      return filter.call(this, value && typeof value === 'object' && !Array.isArray(value) ? ownView(value) : value, ...rest);
    };
  }
  // JSON text that a JSON template writes as its own (output-rules.ts).
  env.filters.dump = dump;
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
    case 'Symbol': {
      const name = String(node.value);
      if (!NAME.test(name)) fail(`invalid name '${name}': names are letters, digits and underscores`);
      if (BLOCKED.has(name)) fail(`'${name}' is not accessible in templates`);
      break;
    }
    case 'Pair': {
      // Keys of dict literals: {"__proto__": x} would set the dict's prototype.
      const key = node.key as AstNode;
      if (key.typename === 'Literal' && BLOCKED.has(String(key.value))) fail(`'${String(key.value)}' cannot be a key in templates`);
      break;
    }
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

/** What a render writes for {{ }} values: by the template's config_format (output-rules.ts). */
export interface OutputRules {
  format: RenderFormat | undefined;
}

function isIndex(key: unknown): boolean {
  return typeof key === 'number' ? Number.isInteger(key) : typeof key === 'string' && /^\d+$/.test(key);
}

/** nunjucks' runtime with every lookup, call and write checked and counted against `budget`. */
export function makeRuntime(budget: Budget, rules: OutputRules): Record<string, unknown> {
  const base = nunjucks.runtime;
  const spend = (n: number) => {
    budget.steps += n;
    if (budget.steps > RENDER_LIMITS.steps) throw new Error(`the template did more than ${RENDER_LIMITS.steps} loop iterations and calls`);
  };
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
        if (STRING_METHODS.has(name)) return bindMethod(obj, (String.prototype as unknown as Record<string, Method>)[name]);
        return undefined;
      }
      if (Array.isArray(obj)) {
        if (name === 'length') return obj.length;
        if (isIndex(key)) return obj[Number(key)];
        if (ARRAY_METHODS.has(name)) return bindMethod(obj, (Array.prototype as unknown as Record<string, Method>)[name]);
        return undefined;
      }
      if (typeof obj === 'object' && Object.hasOwn(obj, name)) {
        const value = (obj as Record<string, unknown>)[name];
        return typeof value === 'function' ? bindMethod(obj, value as Method) : value;
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
    // Counted where it runs, not only where a template calls it: a string method given a macro as
    // its replacer calls it from native code, past callWrap.
    makeMacro(argNames: string[], kwargNames: string[], func: Method): Method {
      const macro = (base.makeMacro as (a: string[], k: string[], f: Method) => Method)(argNames, kwargNames, func);
      return function (this: unknown, ...args: unknown[]) {
        spend(1);
        return macro.apply(this, args);
      };
    },
    callWrap(fn: unknown, name: string, _context: unknown, args: unknown[]): unknown {
      spend(1);
      if (typeof fn !== 'function') throw new Error(`'${name}' is not a function`);
      if (UNCALLABLE.has(fn)) throw new Error(`'${name}' cannot be called from a template`);
      // No `this`: nothing a template calls gets the render's context.
      return (fn as Method)(...args);
    },
    fromIterator(value: unknown): unknown {
      let out = (base.fromIterator as Method)(value);
      if (typeof out === 'function') throw new Error('a function cannot be looped over in templates');
      // An object is looped over as attribute lookups see it (a for loop reads each value itself).
      if (out && typeof out === 'object' && !Array.isArray(out)) out = ownView(out);
      if (Array.isArray(out) || typeof out === 'string') spend(out.length);
      else if (out && typeof out === 'object') spend(Object.keys(out).length);
      return out;
    },
    suppressValue(value: unknown): string {
      const out = writeValue(value, rules.format);
      budget.output += out.length;
      if (budget.output > RENDER_LIMITS.outputChars) throw new Error(outputTooLarge());
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
