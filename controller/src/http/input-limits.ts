/**
 * Limits every request value meets before a route sees it, whatever its schema says: no NUL
 * characters (PostgreSQL text cannot hold one) nor unpaired surrogates, bounded nesting
 * (serializers and loggers recurse), and integers that fit a PostgreSQL integer column unless the
 * schema sets its own bounds.
 */
export const MAX_JSON_DEPTH = 64;
export const INT4_MAX = 2_147_483_647;
export const INT4_MIN = -2_147_483_648;

export interface InputProblem {
  /** JSON pointer of the value, e.g. /settings/name. */
  instancePath: string;
  message: string;
}

const segment = (key: string | number) => `/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`;
const under = (key: string | number, problem: InputProblem): InputProblem => ({ ...problem, instancePath: segment(key) + problem.instancePath });

/**
 * A UTF-16 surrogate without its pair (JSON allows "\uD800"): no Unicode character, so a text
 * column would silently store U+FFFD in its place and a jsonb column (audit details, metadata)
 * refuses it. In unicode mode \p{Cs} matches only unpaired ones.
 */
const LONE_SURROGATE = /\p{Cs}/u;

function textProblem(value: string): InputProblem | null {
  if (value.includes('\u0000')) return { instancePath: '', message: 'must not contain NUL (\\u0000) characters' };
  if (LONE_SURROGATE.test(value)) return { instancePath: '', message: 'must be valid Unicode text (it has an unpaired surrogate, \\uD800-\\uDFFF)' };
  return null;
}

/**
 * The first NUL character, unpaired surrogate or over-deep nesting in a parsed value, or null
 * when there is none. Plain loops, and a path built only for a problem: this runs on every body, query and params.
 */
export function inputProblem(value: unknown, depth = 0): InputProblem | null {
  if (typeof value === 'string') return textProblem(value);
  if (value === null || typeof value !== 'object') return null;
  if (depth >= MAX_JSON_DEPTH) return { instancePath: '', message: `is nested too deeply (more than ${MAX_JSON_DEPTH} levels)` };
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = inputProblem(value[i], depth + 1);
      if (found) return under(i, found);
    }
    return null;
  }
  for (const key of Object.keys(value)) {
    if (key.includes('\u0000')) return under(key, { instancePath: '', message: 'has a property name with a NUL (\\u0000) character' });
    if (LONE_SURROGATE.test(key))
      return under(key, { instancePath: '', message: 'has a property name with an unpaired surrogate (\\uD800-\\uDFFF)' });
    const found = inputProblem((value as Record<string, unknown>)[key], depth + 1);
    if (found) return under(key, found);
  }
  return null;
}

type Schema = Record<string, unknown>;
const NESTED_ONE = ['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains'];
const NESTED_MANY = ['anyOf', 'oneOf', 'allOf', 'prefixItems'];

/**
 * Gives every integer of a request schema without its own bounds the range of a PostgreSQL
 * integer, so `offset=1e18` or a version of 2^40 is a 400 naming the field, not a database error.
 * Changes the schema in place, so the OpenAPI document shows the bounds too.
 */
export function boundIntegers(schema: unknown): void {
  if (!schema || typeof schema !== 'object') return;
  const node = schema as Schema;
  const types = [node.type].flat();
  if (types.includes('integer')) {
    if (node.maximum === undefined && node.exclusiveMaximum === undefined) node.maximum = INT4_MAX;
    if (node.minimum === undefined && node.exclusiveMinimum === undefined) node.minimum = INT4_MIN;
  }
  for (const key of NESTED_ONE) boundIntegers(node[key]);
  for (const key of NESTED_MANY) if (Array.isArray(node[key])) for (const item of node[key] as unknown[]) boundIntegers(item);
  for (const key of ['properties', 'patternProperties', '$defs', 'definitions']) {
    const children = node[key];
    if (children && typeof children === 'object') for (const child of Object.values(children)) boundIntegers(child);
  }
}
