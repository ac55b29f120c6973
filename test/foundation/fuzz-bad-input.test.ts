/**
 * Bad input never gets a 500: every operation of the served OpenAPI document is sent hostile
 * input built from its own schema, as a platform admin and as an org operator. Every answer must
 * be a 4xx (or a success) with an error body a person can act on, the controller must stay
 * healthy, and a batch the controller refused entirely must leave the database as it was.
 *
 * Unlike fuzz.test.ts (wrong types against ids of nothing), the plausible parts of each request
 * here name real records of the caller's organization, so the hostile field reaches the service
 * and the database, and ids of another organization's records are tried everywhere an id goes.
 */
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestController, type TestController } from '../helpers/controller';
import { changedTables, dbFingerprint } from '../helpers/db-fingerprint';
import { eachLimited } from '../helpers/route-spellings';

const CASES_PER_ROUTE = 200;
const CONCURRENCY = 8;
const NOTHING_ID = '00000000-0000-4000-8000-000000000000';

/**
 * Left out, and why: logout ends the session the rest of the run uses. The WebSocket /api/live
 * and its event stream are not in the OpenAPI document (OpenAPI 3.0 cannot describe them) and
 * stay open until closed, so they are not fuzzed here.
 */
const SKIPPED = new Set(['POST /api/auth/logout']);

/**
 * Routes that start device work (pulls, polls, credential tests, deployments, NetBox syncs) get
 * ids of nothing in their plausible parts: a request let through would otherwise queue a job for
 * the seeded device, whose site agent never connects, and wait out the job's deadline.
 */
const DEVICE_WORK =
  /test-credential|\/pull$|bulk-pull|\/poll$|\/collect$|recollect-failed|\/deploy$|^\/api\/config\/deployments$|\/rollback$|\/(test|sync)$/;

// ---------------------------------------------------------------------------------------------
// A tiny seeded PRNG (mulberry32): the same cases every run, so a failure repeats.

function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

function seedOf(text: string): number {
  let h = 2166136261;
  for (const ch of text) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
  return h >>> 0;
}

function sampleOf<T>(items: T[], count: number, random: () => number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy.slice(0, count);
}

// ---------------------------------------------------------------------------------------------
// Hostile values.

const nested = (depth: number): unknown => {
  let value: unknown = 'bottom';
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { a: value };
  return value;
};

/** JSON values put in place of one body field at a time. */
const HOSTILE_VALUES: [string, unknown][] = [
  ['null', null],
  ['empty string', ''],
  ['zero', 0],
  ['negative', -1],
  ['fraction', 1.5],
  ['huge', 1e308],
  ['int4 + 1', 2 ** 31],
  ['beyond 2^53', 2 ** 53 + 2],
  ['boolean', true],
  ['number as text', '1'],
  ['empty array', []],
  ['array of junk', [null, 1, 'a', {}]],
  ['empty object', {}],
  ['object', { a: 1 }],
  ['100 KB string', 'x'.repeat(100_000)],
  ['NUL', 'a\u0000b'],
  ['lone surrogate', 'a\uD800b'],
  ['RTL and emoji', '\u202Eevil\u202C \u{1F4A9} \u05E9\u05DC\u05D5\u05DD'],
  ['not a UUID', 'not-a-uuid'],
  ['UUID of nothing', NOTHING_ID],
  ['depth 1,000', nested(1000)],
  ['prototype name', '__proto__'],
  ['date-ish', '2026-13-45T99:99:99Z'],
  ['template injection', '{{ "".constructor.constructor("return process")() }}'],
  ['template recursion', '{% macro m(n) %}{{ m(n + 1) }}{% endmacro %}{{ m(1) }}'],
];

/** Path segments put in place of one path parameter (already URL-encoded). */
const PATH_VALUES = [
  'not-a-uuid',
  '-1',
  '0',
  '1.5',
  '99999999999',
  '%00',
  'a%00b',
  '%F0%9F%92%A9',
  '%ED%A0%80',
  'x'.repeat(3000),
  '__proto__',
  NOTHING_ID,
];

/** Query values for one parameter (already URL-encoded; %ED%A0%80 is a UTF-8 encoded lone surrogate). */
const QUERY_VALUES = [
  '',
  '-1',
  '0',
  '1.5',
  'NaN',
  '1e9',
  '99999999999',
  'true',
  'abc',
  '%00',
  '%ED%A0%80',
  '%E2%80%AE%F0%9F%92%A9',
  '%',
  'x'.repeat(10_000),
  '__proto__',
  NOTHING_ID,
  'not-a-uuid',
];

/** Whole bodies that are not what a JSON route expects: [what, body, content type]. */
const RAW_BODIES: [string, string | Buffer, string][] = [
  ['not JSON', 'name=x&host=y', 'application/json'],
  ['truncated JSON', '{"name":', 'application/json'],
  ['empty body, JSON content type', '', 'application/json'],
  ['JSON null', 'null', 'application/json'],
  ['JSON number', '42', 'application/json'],
  ['JSON string', '"x"', 'application/json'],
  ['array body', '[{"name":"x"}]', 'application/json'],
  ['depth 1,000 body', JSON.stringify(nested(1000)), 'application/json'],
  ['__proto__ key', '{"__proto__":{"is_platform_admin":true}}', 'application/json'],
  ['constructor key', '{"constructor":{"prototype":{"polluted":1}}}', 'application/json'],
  ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]), 'application/json'],
  ['byte-order mark', '\uFEFF{}', 'application/json'],
  ['JSON as text/plain', '{"name":"x"}', 'text/plain'],
  ['JSON as form', '{"name":"x"}', 'application/x-www-form-urlencoded'],
  ['JSON as XML', '<name>x</name>', 'application/xml'],
  ['JSON with a bad charset', '{}', 'application/json; charset=ebcdic'],
];

/** Bodies for routes that take text (the CSV import). */
const RAW_TEXT_BODIES: [string, string | Buffer, string][] = [
  ['empty CSV', '', 'text/csv'],
  ['header only', 'name,host,device_type', 'text/csv'],
  ['NUL in CSV', 'name,host,device_type\na\u0000,127.0.0.1,generic', 'text/csv'],
  ['lone surrogate in CSV', Buffer.from('name,host,device_type\n\xED\xA0\x80,127.0.0.1,generic', 'latin1'), 'text/csv'],
  ['unbalanced quote', 'name,host\n"a,b', 'text/csv'],
  ['100 KB field', `name,host\n${'x'.repeat(100_000)},h`, 'text/csv'],
  ['JSON as CSV', '{"name":"x"}', 'text/csv'],
  ['CSV as JSON', 'name,host\na,b', 'application/json'],
];

// ---------------------------------------------------------------------------------------------
// The OpenAPI document and plausible values from its schemas.

type Schema = {
  type?: string | string[];
  format?: string;
  enum?: unknown[];
  anyOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  minimum?: number;
  minLength?: number;
  minItems?: number;
  minProperties?: number;
  default?: unknown;
};

interface Operation {
  method: string;
  path: string;
  pathParams: string[];
  query: { name: string; required: boolean; schema: Schema }[];
  body?: { contentType: string; schema: Schema };
}

function operationsOf(doc: { paths: Record<string, Record<string, any>> }): Operation[] {
  const ops: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const params: { in: string; name: string; required?: boolean; schema: Schema }[] = op.parameters ?? [];
      const content = op.requestBody?.content as Record<string, { schema: Schema }> | undefined;
      const contentType = content && Object.keys(content)[0];
      ops.push({
        method: method.toUpperCase(),
        path,
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
        query: params.filter((p) => p.in === 'query').map((p) => ({ name: p.name, required: Boolean(p.required), schema: p.schema })),
        body: contentType ? { contentType, schema: content[contentType].schema } : undefined,
      });
    }
  }
  return ops.filter((op) => !SKIPPED.has(`${op.method} ${op.path}`));
}

type Kind = 'site' | 'profile' | 'device' | 'template' | 'stack' | 'instance' | 'snapshot' | 'task' | 'netbox' | 'agent' | 'user' | 'org';
type Ids = Partial<Record<Kind, string>>;

/** Which kind of record an id field or parameter names, from its name (and the path for `id`). */
const FIELD_KINDS: Record<string, Kind> = {
  site_id: 'site',
  parent_site_id: 'site',
  profile_id: 'profile',
  device_id: 'device',
  device_ids: 'device',
  devices: 'device',
  template_id: 'template',
  stack_id: 'stack',
  instance_id: 'instance',
  snapshot_id: 'snapshot',
  source_id: 'netbox',
  org_id: 'org',
  user_id: 'user',
};
const PATH_KINDS: [RegExp, Kind][] = [
  [/^\/api\/devices\/snapshots\//, 'snapshot'],
  [/^\/api\/devices\/sources\/netbox\//, 'netbox'],
  [/^\/api\/devices\//, 'device'],
  [/^\/api\/sites\//, 'site'],
  [/^\/api\/profiles\//, 'profile'],
  [/^\/api\/config\/templates\//, 'template'],
  [/^\/api\/config\/stacks\//, 'stack'],
  [/^\/api\/config\/instances\//, 'instance'],
  [/^\/api\/tasks\//, 'task'],
  [/^\/api\/agents\//, 'agent'],
  [/^\/api\/admin\/users\//, 'user'],
  [/^\/api\/admin\/organizations\//, 'org'],
];

function kindOf(path: string, name: string): Kind | undefined {
  if (name !== 'id') return FIELD_KINDS[name];
  return PATH_KINDS.find(([pattern]) => pattern.test(path))?.[1];
}

/** Values a field must have for the rest of a request to pass, so the fuzzed field is what gets judged. */
const PLAUSIBLE: Record<string, unknown> = {
  host: '127.0.0.1',
  url: 'http://127.0.0.1:1',
  cron: '0 0 1 1 *',
  timezone: 'UTC',
  device_type: 'vendor_eos',
  platform: 'vendor_eos-gnmi',
  config_format: 'json',
  target_path: '/system/config',
  source: '{}',
  roles: ['operator'],
  password: `correct-horse-${randomBytes(6).toString('hex')}`,
  settings: { 'security.rate_limit.requests_per_minute': 100000 },
  variables: { hostname: 'r1' },
  // Closed ports, so a request that is let through and starts device work fails at once.
  ssh_port: 1,
  netconf_port: 1,
  gnmi_port: 1,
};

/** Optional fields a plausible body carries anyway: without them the rest of the body is refused. */
const OPTIONAL_NEEDED = new Set(['target_path', 'ssh_port', 'netconf_port', 'gnmi_port']);

/** The keys of a plausible object: required ones, needed optional ones, ids the caller has, and one at least. */
function plausibleKeys(schema: Schema, ids: Ids): string[] {
  const keys = Object.keys(schema.properties ?? {}).filter(
    (key) => schema.required?.includes(key) || OPTIONAL_NEEDED.has(key) || Boolean(FIELD_KINDS[key] && ids[FIELD_KINDS[key]]),
  );
  return keys.length || !schema.minProperties ? keys : Object.keys(schema.properties ?? {}).slice(0, 1);
}

function plausible(schema: Schema | undefined, name: string, ids: Ids, depth = 0): unknown {
  if (!schema || depth > 5) return null;
  if (name in PLAUSIBLE) return PLAUSIBLE[name];
  const kind = FIELD_KINDS[name];
  if (kind && ids[kind]) return schema.type === 'array' ? [ids[kind]] : ids[kind];
  if (schema.default !== undefined) return schema.default;
  if (schema.enum?.length) return schema.enum[0];
  if (schema.anyOf?.length) return plausible(schema.anyOf[0], name, ids, depth + 1);
  switch ([schema.type].flat()[0]) {
    case 'string':
      if (schema.format === 'uuid') return NOTHING_ID;
      if (schema.format === 'date-time') return '2026-01-01T00:00:00Z';
      return `fuzz-${randomBytes(3).toString('hex')}`.padEnd(schema.minLength ?? 0, 'z');
    case 'integer':
    case 'number':
      return Math.max(schema.minimum ?? 1, 1);
    case 'boolean':
      return false;
    case 'array':
      return schema.items?.properties || schema.minItems ? [plausible(schema.items, '', ids, depth + 1)] : [];
    case 'object':
      return Object.fromEntries(plausibleKeys(schema, ids).map((key) => [key, plausible(schema.properties?.[key], key, ids, depth + 1)]));
    default:
      return null;
  }
}

/** Every field of a body schema, with its path: top-level ones and those of one nested object or list item. */
function fieldsOf(schema: Schema | undefined, prefix: (string | number)[] = []): { path: (string | number)[]; schema: Schema }[] {
  const fields: { path: (string | number)[]; schema: Schema }[] = [];
  for (const [key, child] of Object.entries(schema?.properties ?? {})) {
    const path = [...prefix, key];
    fields.push({ path, schema: child });
    if (prefix.length === 0 && child.properties) fields.push(...fieldsOf(child, path));
    if (prefix.length === 0 && child.items?.properties) fields.push(...fieldsOf(child.items, [...path, 0]));
  }
  return fields;
}

/** A copy of `body` with the value at `path` replaced (or removed when `value` is `REMOVE`). */
const REMOVE = Symbol('remove');
function withValue(body: unknown, path: (string | number)[], value: unknown): unknown {
  const copy = (body && typeof body === 'object' ? structuredClone(body) : {}) as Record<string | number, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) {
    if (node[key] === undefined || node[key] === null || typeof node[key] !== 'object') node[key] = typeof key === 'number' ? [] : {};
    node = node[key] as Record<string | number, unknown>;
  }
  const last = path[path.length - 1];
  if (value === REMOVE) delete node[last];
  else node[last] = value;
  return copy;
}

// ---------------------------------------------------------------------------------------------
// Cases.

interface Case {
  what: string;
  path: string;
  query: string;
  body?: string | Buffer;
  contentType?: string;
  /** Names another organization's record; always sent, never sampled away. */
  crossOrg?: 'path' | 'body';
}

interface Caller {
  name: string;
  token: string;
  own: Ids;
  other: Ids;
}

function basePath(op: Operation, caller: Caller, override: Record<string, string> = {}): string {
  return op.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    if (name in override) return override[name];
    if (name === 'version') return '1';
    // A delete of one of the caller's own records would leave later routes nothing to work on.
    if (op.method === 'DELETE') return NOTHING_ID;
    return caller.own[kindOf(op.path, name)!] ?? NOTHING_ID;
  });
}

function baseCase(op: Operation, caller: Caller): Case {
  const query = op.query
    .filter((q) => q.required || (FIELD_KINDS[q.name] && caller.own[FIELD_KINDS[q.name]]))
    .map((q) => `${q.name}=${encodeURIComponent(String(plausible(q.schema, q.name, caller.own)))}`);
  const base: Case = { what: 'plausible', path: basePath(op, caller), query: query.length ? `?${query.join('&')}` : '' };
  if (!op.body) return base;
  if (!op.body.contentType.includes('json'))
    return { ...base, body: 'name,host,device_type\nfuzz,127.0.0.1,generic', contentType: op.body.contentType };
  return { ...base, body: JSON.stringify(plausible(op.body.schema, '', caller.own)), contentType: op.body.contentType };
}

function pathCases(op: Operation, caller: Caller, base: Case): Case[] {
  return op.pathParams.flatMap((name) => {
    const withParam = (value: string) => basePath(op, caller, { [name]: value });
    const kind = kindOf(op.path, name);
    const other = kind && caller.other[kind];
    const cases = PATH_VALUES.map((value) => ({ ...base, what: `path ${name}=${value.slice(0, 24)}`, path: withParam(value) }));
    return other
      ? [...cases, { ...base, what: `path ${name}=another organization's ${kind}`, path: withParam(other), crossOrg: 'path' as const }]
      : cases;
  });
}

function queryCases(op: Operation, base: Case): Case[] {
  const join = (extra: string) => (base.query ? `${base.query}&${extra}` : `?${extra}`);
  const cases = op.query.flatMap((q) => [
    ...QUERY_VALUES.map((value) => ({ ...base, what: `query ${q.name}=${value.slice(0, 24)}`, query: join(`${q.name}=${value}`) })),
    { ...base, what: `query ${q.name} repeated`, query: join(`${q.name}=1&${q.name}=2`) },
    { ...base, what: `query ${q.name}[] bracketed`, query: join(`${q.name}[a]=1`) },
  ]);
  cases.push({ ...base, what: 'unknown query keys', query: join('__proto__=1&constructor=x&sort=nonexistent_field&zz%00=1') });
  return cases;
}

function bodyCases(op: Operation, caller: Caller, base: Case): Case[] {
  if (!op.body) return [];
  if (!op.body.contentType.includes('json')) return RAW_TEXT_BODIES.map(([what, body, contentType]) => ({ ...base, what, body, contentType }));
  const sample = JSON.parse(base.body as string);
  const json = (what: string, value: unknown, extra: Partial<Case> = {}): Case => ({ ...base, what, body: JSON.stringify(value), ...extra });
  const cases: Case[] = RAW_BODIES.map(([what, body, contentType]) => ({ ...base, what, body, contentType }));
  const fields = fieldsOf(op.body.schema);
  for (const { path, schema } of fields) {
    const name = path.join('.');
    for (const [what, value] of HOSTILE_VALUES) cases.push(json(`body.${name} ${what}`, withValue(sample, path, value)));
    cases.push(json(`body.${name} missing`, withValue(sample, path, REMOVE)));
    const kind = FIELD_KINDS[String(path[path.length - 1])];
    const other = kind && caller.other[kind];
    if (other)
      cases.push(
        json(`body.${name}=another organization's ${kind}`, withValue(sample, path, schema.type === 'array' ? [other] : other), { crossOrg: 'body' }),
      );
  }
  if (sample && typeof sample === 'object' && !Array.isArray(sample)) {
    cases.push(json('extra field', { ...sample, unexpected_field: 1 }));
    const [key] = Object.keys(sample);
    if (key) cases.push({ ...base, what: `duplicate key ${key}`, body: `{"${key}":{"a":1},${(base.body as string).slice(1)}` });
  }
  cases.push(json('every field null', Object.fromEntries(fields.filter((f) => f.path.length === 1).map((f) => [f.path[0], null]))));
  return cases;
}

/** A fixed number of cases per route: every cross-organization case, then a seeded sample of the rest. */
function casesFor(op: Operation, who: Caller): Case[] {
  const caller = DEVICE_WORK.test(op.path) ? { ...who, own: {} } : who;
  const base = baseCase(op, caller);
  const all = [...pathCases(op, caller, base), ...queryCases(op, base), ...bodyCases(op, caller, base)];
  const crossOrg = all.filter((c) => c.crossOrg);
  const rest = all.filter((c) => !c.crossOrg);
  const random = prng(seedOf(`${caller.name} ${op.method} ${op.path}`));
  return [...crossOrg, ...sampleOf(rest, Math.max(0, CASES_PER_ROUTE - crossOrg.length), random)];
}

// ---------------------------------------------------------------------------------------------
// Judging an answer.

/**
 * API.md: snapshot endpoints answer errors as plain text, every other endpoint as {error, code}.
 * A URL the router refuses before it reaches any endpoint (no such route, a path it cannot
 * decode) is answered as JSON like any unknown URL.
 */
const plainTextErrors = (path: string) => path.startsWith('/api/devices/snapshots');
const ROUTER_REFUSALS = /^\{"error":"(Route not found|The path |A path parameter )/;

function problemWith(op: Operation, res: { status: number; text: string; contentType: string }): string | null {
  if (res.status >= 500) return `status ${res.status}: ${res.text.slice(0, 200)}`;
  if (res.status < 400) return null;
  if (plainTextErrors(op.path) && !ROUTER_REFUSALS.test(res.text)) {
    return res.contentType.startsWith('text/plain') && res.text.trim() ? null : `error is not plain text: ${res.text.slice(0, 200)}`;
  }
  if (!res.contentType.includes('application/json')) return `error is not JSON (${res.contentType}): ${res.text.slice(0, 200)}`;
  const body = JSON.parse(res.text) as { error?: unknown; code?: unknown };
  if (typeof body.error !== 'string' || !body.error.trim()) return `error has no message: ${res.text.slice(0, 200)}`;
  if (typeof body.code !== 'string' || !/^[A-Z][A-Z0-9_]*$/.test(body.code)) return `error has no code: ${res.text.slice(0, 200)}`;
  return null;
}

// ---------------------------------------------------------------------------------------------
// The controller, two organizations of records, and the callers.

let c: TestController;
let operations: Operation[];
let callers: Caller[];

async function ok(token: string, method: string, path: string, body: unknown): Promise<any> {
  const res = await c.request(method, path, { token, body });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
  return res.body;
}

/** One record of each kind in the token's organization, their devices on closed ports of this host. */
async function seed(token: string): Promise<Ids> {
  const name = (prefix: string) => `${prefix}-${randomBytes(3).toString('hex')}`;
  const ports = { ssh_port: 1, netconf_port: 1, gnmi_port: 1 };
  const me = await ok(token, 'GET', '/api/auth/me', undefined);
  const profile = await ok(token, 'POST', '/api/profiles', { name: name('profile'), username: 'admin', password: 'admin-password', ...ports });
  const site = await ok(token, 'POST', '/api/sites', { name: name('site') });
  const device = await ok(token, 'POST', '/api/devices', {
    name: name('dev'),
    host: '127.0.0.1',
    device_type: 'vendor_eos',
    profile_id: profile.id,
    site_id: site.id,
  });
  const template = await ok(token, 'POST', '/api/config/templates', {
    name: name('tpl'),
    platform: 'vendor_eos-gnmi',
    config_format: 'json',
    target_path: '/system/config',
    source: '{"hostname": "{{ hostname }}"}',
  });
  const stack = await ok(token, 'POST', '/api/config/stacks', {
    name: name('stack'),
    services: [{ template_id: template.id, variables: { hostname: 'r1' } }],
  });
  const instance = await ok(token, 'POST', '/api/config/instances', {
    name: name('inst'),
    stack_id: stack.id,
    target_devices: [{ device_id: device.id }],
  });
  const snapshot = await ok(token, 'POST', '/api/devices/snapshots/', { name: name('snap'), device_filter: { site_id: site.id } });
  const task = await ok(token, 'POST', '/api/tasks/', {
    name: name('task'),
    cron: '0 0 1 1 *',
    type: 'deployment',
    instance_id: instance.id,
    enabled: false,
  });
  const netbox = await ok(token, 'POST', '/api/devices/sources/netbox', { name: name('nb'), url: 'http://127.0.0.1:1', token: 'x'.repeat(40) });
  const agent = await ok(token, 'POST', '/api/agents', { name: name('agent'), site_id: site.id });
  const user = await ok(token, 'POST', '/api/admin/users', {
    username: name('u'),
    password: `pw-${randomBytes(12).toString('hex')}`,
    roles: ['auditor'],
  });
  return {
    org: me.org_id,
    profile: profile.id,
    site: site.id,
    device: device.id,
    template: template.id,
    stack: stack.id,
    instance: instance.id,
    snapshot: snapshot.snapshot.id,
    task: task.id,
    netbox: netbox.id,
    agent: agent.id,
    user: user.id,
  };
}

/** An operator of the organization `adminToken` administers. */
async function operatorOf(adminToken: string): Promise<string> {
  const username = `op-${randomBytes(4).toString('hex')}`;
  const password = `pw-${randomBytes(12).toString('hex')}`;
  await ok(adminToken, 'POST', '/api/admin/users', { username, password, roles: ['operator'] });
  return (await c.login(username, password)).body.access_token;
}

beforeAll(async () => {
  // Refused sign-ins and thousands of requests must not lock the run out halfway through.
  c = await startTestController({
    // The background poller writes to devices whenever a PUT let `poll_enabled: true` through; the
    // check that a refused batch wrote nothing would take its writes for the batch's.
    config: { discovery: { scheduler: false } },
    settings: {
      'security.rate_limit.failed_login_limit': 1000,
      'security.rate_limit.requests_per_minute': 100000,
      // The seeded NetBox sources point at a closed port of this host, so a sync fails at once.
      'netbox.allowed_hosts': ['127.0.0.1'],
    },
  });
  operations = operationsOf((await c.request('GET', '/api/docs/json')).body);
  const orgA = await c.createOrgUser(['org_admin']);
  const orgB = await c.createOrgUser(['org_admin']);
  const [adminIds, aIds, bIds] = [await seed(c.adminToken), await seed(orgA.token), await seed(orgB.token)];
  callers = [
    { name: 'platform admin', token: c.adminToken, own: adminIds, other: bIds },
    { name: 'org operator', token: await operatorOf(orgA.token), own: aIds, other: bIds },
  ];
}, 60_000);
afterAll(async () => c?.close());

async function send(caller: Caller, op: Operation, fuzz: Case) {
  const headers: Record<string, string> = { authorization: `Bearer ${caller.token}` };
  if (fuzz.body !== undefined) headers['content-type'] = fuzz.contentType ?? 'application/json';
  const res = await fetch(c.url + fuzz.path + fuzz.query, { method: op.method, headers, body: fuzz.body });
  return { status: res.status, text: await res.text(), contentType: res.headers.get('content-type') ?? '' };
}

const healthy = async () => (await c.request('GET', '/healthz')).status === 200;

/** Runs one route's batch for one caller; returns its failures. */
async function fuzzRoute(caller: Caller, op: Operation): Promise<string[]> {
  const failures: string[] = [];
  const label = `${caller.name}: ${op.method} ${op.path}`;
  const before = op.method === 'GET' ? '' : await dbFingerprint(c.db);
  let accepted = false;
  await eachLimited(casesFor(op, caller), CONCURRENCY, async (fuzz) => {
    const res = await send(caller, op, fuzz);
    if (res.status < 400) accepted = true;
    const problem = problemWith(op, res);
    if (problem) failures.push(`${label} [${fuzz.what}] ${problem}`);
    // A path naming another organization's record is that organization's: never found. (A body
    // reference may be let through where the route documents ignoring foreign ids, and platform
    // admins administer every organization.)
    if (fuzz.crossOrg === 'path' && res.status < 400 && !op.path.startsWith('/api/admin/organizations'))
      failures.push(`${label} [${fuzz.what}] succeeded: ${res.status}`);
  });
  if (!(await healthy())) failures.push(`${label}: /healthz is not 200 after the batch`);
  // A batch with only refusals may not have written anything.
  if (before && !accepted) {
    const changed = changedTables(before, await dbFingerprint(c.db));
    if (changed.length) failures.push(`${label}: refused requests changed ${changed.join(', ')}`);
  }
  return failures;
}

/** Requests whose value only the database refused (the error handler's net, which logs a warning). */
function databaseRefusals(): string[] {
  const lines = c
    .logs()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { reqId?: string; msg?: string; pg_code?: string; req?: { method: string; url: string } });
  const requests = new Map(lines.filter((l) => l.req).map((l) => [l.reqId, `${l.req!.method} ${l.req!.url.slice(0, 160)}`]));
  return lines.filter((l) => l.msg?.startsWith('the database refused')).map((l) => `${requests.get(l.reqId)} (${l.pg_code})`);
}

describe('hostile input to every route of the OpenAPI document', () => {
  it('never gets a 5xx, always gets an error body a person can act on, and never half-writes', async () => {
    expect(operations.length).toBeGreaterThan(100);
    const failures: string[] = [];
    for (const caller of callers) {
      for (const op of operations) failures.push(...(await fuzzRoute(caller, op)));
    }
    expect(failures).toEqual([]);
    // The database refused a value some schema let through: a 400, but with a message nobody can act on.
    expect(databaseRefusals()).toEqual([]);
    expect(c.logs()).not.toContain('"level":50');
  }, 300_000); // about 45 s alone; far longer beside a busy suite on two cores
});

describe('requests that race or pull the ground from under other records', () => {
  it('the same create or update sent four times at once is a success or a 409, never a 500', async () => {
    const failures: string[] = [];
    for (const caller of callers) {
      for (const op of operations.filter((o) => (o.method === 'POST' || o.method === 'PUT') && o.body?.contentType.includes('json'))) {
        const fuzz = baseCase(op, DEVICE_WORK.test(op.path) ? { ...caller, own: {} } : caller);
        const answers = await Promise.all([1, 2, 3, 4].map(() => send(caller, op, fuzz)));
        for (const res of answers) {
          const problem = problemWith(op, res);
          if (problem) failures.push(`${caller.name}: ${op.method} ${op.path} ×4 ${problem}`);
        }
      }
    }
    expect(failures).toEqual([]);
    expect(databaseRefusals()).toEqual([]);
  }, 60_000);

  it('deleting a record others still refer to is refused or cascades, never a 500', async () => {
    const failures: string[] = [];
    for (const caller of callers) {
      for (const op of operations.filter((o) => o.method === 'DELETE' && o.pathParams.length)) {
        const kind = kindOf(op.path, op.pathParams[0]);
        const id = kind && caller.own[kind];
        if (!id || op.pathParams.length > 1) continue;
        const res = await send(caller, op, { what: 'delete in use', path: op.path.replace(/\{\w+\}/, id), query: '' });
        const problem = problemWith(op, res);
        if (problem) failures.push(`${caller.name}: DELETE ${op.path} (${kind} in use) ${problem}`);
      }
    }
    expect(failures).toEqual([]);
    expect(await healthy()).toBe(true);
  });
});

// Each case below was a failure of the sweep above, kept as a named test.
describe('bad input the sweep found', () => {
  const admin = () => callers[0];

  it('an unpaired surrogate (\\uD800) is a 400 naming the field, not a database refusal or a silent U+FFFD', async () => {
    const [before] = await c.db('sites').count({ n: '*' });
    const site = await c.request('POST', '/api/sites', { token: admin().token, body: { name: 'a\uD800b' } });
    expect(site.status).toBe(400);
    expect(site.body).toEqual({
      error: 'body.name must be valid Unicode text (it has an unpaired surrogate, \\uD800-\\uDFFF)',
      code: 'VALIDATION_FAILED',
    });
    expect(await c.db('sites').count({ n: '*' })).toEqual([before]);

    const metadata = {
      name: 'dev-surrogate',
      host: '127.0.0.1',
      device_type: 'generic',
      profile_id: admin().own.profile,
      metadata: { note: '\uDC00' },
    };
    const device = await c.request('POST', '/api/devices', { token: admin().token, body: metadata });
    expect(device.status).toBe(400);
    expect(device.body.error).toMatch(/^body\.metadata\.note must be valid Unicode text/);
    expect(databaseRefusals()).toEqual([]);
  });

  it('a paired surrogate (an emoji) is still ordinary text', async () => {
    const site = await c.request('POST', '/api/sites', { token: admin().token, body: { name: `site \u{1F4A9} ${randomBytes(2).toString('hex')}` } });
    expect(site.status).toBe(201);
    expect(site.body.name).toContain('\u{1F4A9}');
  });

  it('a path the router cannot decode, or with an over-long parameter, gets the usual {error, code} body', async () => {
    const badEncoding = await c.request('GET', '/api/devices/%ED%A0%80', { token: admin().token });
    expect(badEncoding.status).toBe(400);
    expect(badEncoding.body).toEqual({
      error: 'The path /api/devices/%ED%A0%80 has a percent-encoding (%XX) that is not valid UTF-8',
      code: 'VALIDATION_FAILED',
    });
    const longParam = await c.request('DELETE', `/api/devices/snapshots/${'x'.repeat(3000)}`, { token: admin().token });
    expect(longParam.status).toBe(400);
    expect(longParam.body.code).toBe('VALIDATION_FAILED');
    expect(longParam.body.error).toMatch(/^A path parameter of \/api\/devices\/snapshots\/x+… is too long to be an id$/);
  });

  it("what Node's HTTP parser refuses (headers over 16 KiB, bytes that are not HTTP) gets the usual {error, code} body too", async () => {
    const long = await fetch(`${c.url}/api/devices?q=${'x'.repeat(20_000)}`);
    expect(long.status).toBe(431);
    expect(await long.json()).toEqual({ error: 'Request line and headers are too large', code: 'HEADERS_TOO_LARGE' });
    const answer = await rawExchange(c.url, 'NOT HTTP AT ALL\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({ error: 'Malformed HTTP request', code: 'MALFORMED_REQUEST' });
  });
});

/** What the server at `url` answers to `bytes` sent as they are on a plain TCP connection. */
function rawExchange(url: string, bytes: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    let answer = '';
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    socket.on('data', (d: Buffer) => (answer += d.toString('utf8')));
    socket.on('close', () => resolve(answer));
    // The server closes the connection after its answer, perhaps with a reset: what came before counts.
    socket.on('error', (err) => (answer ? resolve(answer) : reject(err)));
  });
}
