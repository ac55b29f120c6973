/**
 * Hostile values for every parameter and body field of an OpenAPI operation: wrong types,
 * numbers out of range, NUL and control characters, oversized strings, deep nesting and unknown
 * keys. Deterministic (a seeded sample), so a failure repeats.
 */
export interface Operation {
  method: string;
  path: string;
  parameters: { in: string; name: string; schema?: Schema }[];
  body?: { contentType: string; schema?: Schema };
  /** Statuses the document lists for the operation. */
  statuses: Set<number>;
}

export type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  enum?: unknown[];
  format?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  default?: unknown;
};

export interface FuzzCase {
  what: string;
  path: string;
  query: string;
  body?: string;
  contentType?: string;
}

const SOME_ID = '3f0c0b9e-1d0e-4a5e-9b51-7c2a8f9e0a11';
const deep = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const CONTROL = 'a\u0001\u0007\u001b[31m\u007f\r\nb';
const BIG = 'x'.repeat(200_000);

/** Text values for path and query parameters. */
export const TEXT_VALUES = [
  '%00',
  'a%00b',
  encodeURIComponent(CONTROL),
  '1e18',
  '-1',
  '2147483648',
  '9007199254740993',
  '1.5',
  'NaN',
  'true',
  '',
  'x'.repeat(3000),
  '%E2%80%AE%F0%9F%92%A9',
  '..%2F..%2Fetc%2Fpasswd',
  '%C0%AF',
];

/** JSON values for body fields (as JSON text, so deep nesting costs nothing to build). */
export const JSON_VALUES: [string, string][] = [
  ['NUL', JSON.stringify('a\u0000b')],
  ['control characters', JSON.stringify(CONTROL)],
  ['oversized string', JSON.stringify(BIG)],
  ['huge number', '1e308'],
  ['negative', '-1'],
  ['int4 + 1', '2147483648'],
  ['beyond 2^53', '9007199254740993'],
  ['fraction', '1.5'],
  ['string', '"1"'],
  ['boolean', 'true'],
  ['null', 'null'],
  ['array', '[1,"a",null]'],
  ['object', '{"a":1}'],
  ['deep nesting', deep(5000)],
  ['object member name', '"constructor"'],
];

/** A plausible value for a schema (so the other fields of a body pass and the fuzzed one is reached). */
export function sample(schema: Schema | undefined, depth = 0): unknown {
  if (!schema || depth > 6) return null;
  if (schema.default !== undefined) return schema.default;
  if (schema.enum?.length) return schema.enum[0];
  if (schema.anyOf?.length) return sample(schema.anyOf[0], depth + 1);
  const type = [schema.type].flat()[0];
  switch (type) {
    case 'string':
      if (schema.format === 'uuid') return SOME_ID;
      if (schema.format === 'date-time') return '2026-01-01T00:00:00Z';
      return 'fuzz'.padEnd(schema.minLength ?? 4, 'z');
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return false;
    case 'array':
      return [];
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const key of schema.required ?? []) out[key] = sample(schema.properties?.[key], depth + 1);
      return out;
    }
    default:
      return null;
  }
}

/** Replaces a marker in a JSON document with raw JSON text. */
const MARK = '"__fuzz_value__"';
function bodyWith(base: Record<string, unknown>, field: string, rawValue: string): string {
  return JSON.stringify({ ...base, [field]: '__fuzz_value__' }).replace(MARK, rawValue);
}

/** Every hostile case of one operation. */
export function casesFor(op: Operation): FuzzCase[] {
  const params = op.parameters.filter((p) => p.in === 'path');
  const plainPath = op.path.replace(/\{(\w+)\}/g, (_m, name: string) => (/version/.test(name) ? '1' : SOME_ID));
  const cases: FuzzCase[] = [];
  const bodySchema = op.body?.schema;
  const json = !op.body || op.body.contentType.includes('json');
  const baseBody = bodySchema && json ? (sample(bodySchema) as Record<string, unknown>) : undefined;
  const base = {
    path: plainPath,
    query: '',
    ...(op.body ? { body: json ? JSON.stringify(baseBody ?? {}) : 'a,b\n1,2', contentType: op.body.contentType } : {}),
  };

  for (const param of params) {
    for (const value of TEXT_VALUES) {
      if (value === '') continue; // an empty segment is another route
      cases.push({
        ...base,
        what: `path ${param.name}=${value.slice(0, 20)}`,
        path: op.path.replace(`{${param.name}}`, value).replace(/\{(\w+)\}/g, SOME_ID),
      });
    }
  }
  for (const param of op.parameters.filter((p) => p.in === 'query')) {
    for (const value of TEXT_VALUES) cases.push({ ...base, what: `query ${param.name}=${value.slice(0, 20)}`, query: `?${param.name}=${value}` });
    cases.push({ ...base, what: `query ${param.name} twice`, query: `?${param.name}=1&${param.name}=2` });
  }
  cases.push({ ...base, what: 'unknown query key', query: '?__proto__=1&constructor=x&zz%00=1' });
  if (op.body && json) {
    const fields = Object.keys(bodySchema?.properties ?? {});
    for (const field of [...fields, 'unknown_field', 'constructor']) {
      for (const [what, raw] of JSON_VALUES) cases.push({ ...base, what: `body.${field} ${what}`, body: bodyWith(baseBody ?? {}, field, raw) });
    }
    for (const [what, raw] of [
      ['deep body', deep(20_000)],
      ['array body', '[]'],
      ['string body', '"x"'],
      ['NUL key', '{"a\\u0000":1}'],
      ['prototype key', '{"__proto__":{"x":1}}'],
    ] as const) {
      cases.push({ ...base, what, body: raw });
    }
  } else if (op.body) {
    cases.push({ ...base, what: 'NUL in text body', body: 'name\u0000,host\n\u0000,\u0001' });
    cases.push({ ...base, what: 'oversized text body', body: BIG });
  }
  return cases;
}

/** A deterministic sample of at most `limit` cases (seeded shuffle). */
export function sampleCases(cases: FuzzCase[], limit: number, seed: number): FuzzCase[] {
  if (cases.length <= limit) return cases;
  let state = seed >>> 0 || 1;
  const random = () => (state = (state * 1664525 + 1013904223) >>> 0) / 2 ** 32;
  const shuffled = cases
    .map((c) => ({ c, k: random() }))
    .sort((a, b) => a.k - b.k)
    .map(({ c }) => c);
  return shuffled.slice(0, limit);
}

/** The operations of an OpenAPI 3 document. */
export function operationsOf(doc: { paths: Record<string, Record<string, any>> }): Operation[] {
  const ops: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const content = op.requestBody?.content as Record<string, { schema?: Schema }> | undefined;
      const contentType = content ? Object.keys(content)[0] : undefined;
      ops.push({
        method: method.toUpperCase(),
        path,
        parameters: op.parameters ?? [],
        body: contentType ? { contentType, schema: content![contentType].schema } : undefined,
        statuses: new Set(Object.keys(op.responses ?? {}).map(Number)),
      });
    }
  }
  return ops;
}
