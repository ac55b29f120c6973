/**
 * The template engine: nunjucks (Jinja-style syntax) behind a sandbox (sandbox.ts), with the
 * variables each template reads (variables.ts). What a value may hold depends on the template's
 * config_format (output-rules.ts); nothing is HTML-escaped: configs are not HTML.
 *
 * This module is pure and synchronous; `render-pool.ts` runs it in worker threads with time and
 * memory limits so that no template can stall or exhaust the controller.
 */
import { BLOCKED, RENDER_LIMITS, check, env, makeRuntime, outputTooLarge, type Budget, type OutputRules } from './sandbox';
import { TemplateError, compile, nunjucks, parse, toTemplateError, type RootFn } from './syntax';
import { templateVariables, type TemplateVariable } from './variables';

export { RENDER_LIMITS } from './sandbox';
export { TemplateError } from './syntax';
export type { TemplateVariable, VariableType } from './variables';

/** Parses and checks a template; its variables, or the syntax error with its line. */
export function analyzeTemplate(source: string): { variables: TemplateVariable[]; error: TemplateError | null } {
  try {
    const ast = parse(source);
    check(ast);
    return { variables: templateVariables(ast), error: null };
  } catch (err) {
    return { variables: [], error: toTemplateError(err) };
  }
}

import { renderingAs, type RenderFormat } from './output-rules';
export type { RenderFormat } from './output-rules';

export interface CompiledTemplate {
  readonly variables: TemplateVariable[];
  render(variables: Record<string, unknown>, format?: RenderFormat): string;
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
  const variables = templateVariables(ast);
  let props: Record<string, unknown>;
  try {
    // The tree just checked, compiled by nunjucks' compiler (syntax.ts) and run the way nunjucks runs
    // it (Environment.getTemplate does the same).
    const code = compile(ast, env.asyncFilters);
    // eslint-disable-next-line @typescript-eslint/no-implied-eval
    props = new Function(code)() as Record<string, unknown>;
  } catch (err) {
    throw toTemplateError(err);
  }
  let budget: Budget = { steps: 0, output: 0 };
  let rules: OutputRules = { format: undefined };
  const root = props.root as RootFn;
  // The compiled code gets the sandboxed runtime instead of nunjucks' own; blocks and macros
  // receive it from root.
  props.root = ((e, context, frame, _runtime, cb) => root(e, context, frame, makeRuntime(budget, rules), cb)) as RootFn;
  const template = new nunjucks.Template({ type: 'code', obj: props }, env, 'template', true);
  const compiled: CompiledTemplate = {
    variables,
    render(given, format) {
      budget = { steps: 0, output: 0 };
      rules = { format };
      const ctx: Record<string, unknown> = Object.create(null);
      for (const [key, value] of Object.entries(given)) if (!BLOCKED.has(key)) ctx[key] = value;
      try {
        const output = renderingAs(format, () => template.render(ctx));
        // The runtime stops {{ }} output at the limit as it is written; literal text (a loop's body
        // repeated) only shows here, before the output leaves the render.
        if (output.length > RENDER_LIMITS.outputChars) throw new TemplateError(outputTooLarge());
        return output;
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
export function renderTemplate(source: string, variables: Record<string, unknown>, format?: RenderFormat): string {
  return compileTemplate(source).render(variables, format);
}
