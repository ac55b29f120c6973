/**
 * Request bodies against `npm run controller` as it runs in production: a real process with its
 * 256 MiB heap, an operator of an organization. The audit's body (16 MB of empty objects, which
 * parsed into more than the heap and killed the process), bodies at the value limit of the
 * costliest shape several at once, and the largest legitimate requests: a render over 10,000
 * devices with per-device variables at the body and value limits (two at once) and a deployment
 * over 10,000 devices.
 */
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../controller/src/db/knex';
import { MAX_BODY_VALUES, VARIABLE_VALUES_BODY_LIMIT } from '../../controller/src/http/body-limits';
import { countJsonValues } from '../../controller/src/http/large-bodies';
import { SERVICES, variableValues } from '../bench/render';
import { createTestDatabase } from '../helpers/postgres';
import { startControllerProcess, stopAll, type ControllerProcess } from '../helpers/processes';
import { api, orgAdmin } from './helpers';

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let db: Db;
let ctl: ControllerProcess;
let user: Awaited<ReturnType<typeof orgAdmin>>;

beforeAll(async () => {
  database = await createTestDatabase();
  db = await createDb(database.url, '/tmp');
  ctl = await startControllerProcess({ databaseUrl: database.url });
  user = await orgAdmin(api(() => ctl.url));
}, 120_000);

afterAll(async () => {
  await ctl?.stop(30_000);
  await stopAll();
  await db?.destroy();
  await database?.drop();
});

async function call(method: string, path: string, body?: string, type = 'application/json') {
  const res = await fetch(ctl.url + path, {
    method,
    headers: { authorization: `Bearer ${user.token}`, ...(body === undefined ? {} : { 'content-type': type }) },
    body,
  });
  const text = await res.text();
  return { status: res.status, text, body: (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text };
}

/**
 * A POST whose body the controller refuses by its length alone: it answers 413 from the headers,
 * so the body is not sent (the answer cannot depend on it). A client that does send it can finish
 * and read the answer (test/foundation/refused-uploads.test.ts).
 */
function postRefusedEarly(path: string, body: string): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = request(ctl.url + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
        req.destroy();
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.flushHeaders();
  });
}

/** The process still runs and answers, an authenticated request included. */
async function expectAnswering() {
  expect(ctl.running).toBe(true);
  expect((await fetch(`${ctl.url}/healthz`)).status).toBe(200);
  expect((await call('GET', '/api/auth/me')).status).toBe(200);
}

/** A render body whose shared_vars.x is `x` (the "€" makes the decoded text two bytes a character). */
const renderBody = (x: string) => `{"variable_values":{"0":{"devices":[],"shared_vars":{"t":"€","x":${x}}}}}`;
const renderUnknownStack = (body: string) => call('POST', `/api/config/stacks/${randomUUID()}/render`, body);

describe('bodies that parse into more than the heap', () => {
  it("the audit's 16 MB of empty objects is a 413 before it is parsed, and the controller answers afterwards", async () => {
    const audit = await postRefusedEarly(`/api/config/stacks/${randomUUID()}/render`, renderBody(`[${'{},'.repeat(5_600_000)}{}]`));
    expect(audit.status).toBe(413);
    expect(audit.body).toEqual({
      error: 'Request body is over the 16 MiB limit of this endpoint',
      code: 'BODY_TOO_LARGE',
      max_bytes: VARIABLE_VALUES_BODY_LIMIT,
    });
    // The same objects within the byte limit: too many values, refused before parsing too.
    const values = await renderUnknownStack(renderBody(`[${'{},'.repeat(5_000_000)}{}]`));
    expect(values.status).toBe(413);
    expect(values.body).toMatchObject({ code: 'BODY_TOO_MANY_VALUES', max_values: MAX_BODY_VALUES });
    expect(values.body.error).toMatch(/^Request body holds more than 1,000,000 JSON values .*; send the work in several smaller requests$/);
    await expectAnswering();
  });

  it('four bodies of the costliest shape just under the value limit, at once, are each answered', async () => {
    // Objects each with a key never seen before: about 90 MiB of heap per body once parsed, so four
    // parsed at once would not fit in the heap; the heap budget parses and handles them in turn.
    const body = renderBody(`[${Array.from({ length: MAX_BODY_VALUES / 2 - 10 }, (_, i) => `{"${i.toString(36)}":0}`).join(',')}]`);
    expect(countJsonValues(Buffer.from(body))).toBeGreaterThan(MAX_BODY_VALUES - 20);
    expect(countJsonValues(Buffer.from(body))).toBeLessThanOrEqual(MAX_BODY_VALUES);
    const answers = await Promise.all([1, 2, 3, 4].map(() => renderUnknownStack(body)));
    expect(answers.map((a) => `${a.status} ${a.body.code}`)).toEqual(Array(4).fill('404 STACK_NOT_FOUND'));
    await expectAnswering();
  }, 120_000);
});

describe('the largest legitimate requests', () => {
  let ids: string[];
  let stackId: string;

  beforeAll(async () => {
    // 10,000 devices in one CSV import, as an operator adds them.
    const profile = await call(
      'POST',
      '/api/profiles',
      JSON.stringify({ name: 'large', username: 'netops', password: 'large-Device-pw', automation_transport: 'gnmi' }),
    );
    expect(profile.status, profile.text).toBe(201);
    const csv = ['name,host,device_type', ...Array.from({ length: 10_000 }, (_, i) => `leaf${i + 1},10.1.${i >> 8}.${i & 255},vendor_eos`)];
    const imported = await call('POST', `/api/devices/import/csv?profile_id=${profile.body.id}`, csv.join('\n'), 'text/csv');
    expect(imported.body).toMatchObject({ imported: 10_000, failed: 0 });
    ids = (await db('devices').where({ org_id: user.orgId }).orderBy('name').select('id')).map((r: { id: string }) => r.id);
    const templates = [];
    for (const s of SERVICES) {
      const body = { name: s.name, platform: 'openconfig-gnmi', config_format: 'json', target_path: s.target_path, source: s.source };
      templates.push((await call('POST', '/api/config/templates', JSON.stringify(body))).body);
    }
    const stack = await call(
      'POST',
      '/api/config/stacks',
      JSON.stringify({ name: 'fabric', services: templates.map((t, order) => ({ template_id: t.id, order })) }),
    );
    expect(stack.status, stack.text).toBe(201);
    stackId = stack.body.id;
  }, 120_000);

  it('a render over 10,000 devices with per-device variables at the body and value limits, two at once', async () => {
    // The render benchmark's variables (8 interfaces and 4 BGP neighbors a device), each device's
    // padded with variables the templates do not use until the body reaches both limits.
    const values = variableValues(ids);
    const base = Buffer.from(JSON.stringify({ variable_values: values }));
    const padValues = Math.floor((MAX_BODY_VALUES - countJsonValues(base) - 1_000) / ids.length) - 2;
    const noteBytes = Math.floor((VARIABLE_VALUES_BODY_LIMIT - base.length - 64 * 1024) / ids.length) - 2 * padValues - 20;
    for (const vars of Object.values(values['2'].device_vars)) Object.assign(vars, { pad: Array(padValues).fill(0), note: 'n'.repeat(noteBytes) });
    const body = JSON.stringify({ variable_values: values });
    expect(body.length).toBeLessThanOrEqual(VARIABLE_VALUES_BODY_LIMIT);
    expect(body.length).toBeGreaterThan(VARIABLE_VALUES_BODY_LIMIT - 128 * 1024);
    expect(countJsonValues(Buffer.from(body))).toBeLessThanOrEqual(MAX_BODY_VALUES);
    expect(countJsonValues(Buffer.from(body))).toBeGreaterThan(MAX_BODY_VALUES - 20_000);

    const renders = await Promise.all([1, 2].map(() => call('POST', `/api/config/stacks/${stackId}/render`, body)));
    for (const render of renders) {
      expect(render.status, render.text.slice(0, 500)).toBe(200);
      expect(render.body.jobs).toHaveLength(30_000);
      expect(JSON.parse(render.body.jobs.at(-1).rendered_config)).toMatchObject({ bgp: { global: { as: 65000 } } });
    }
    await expectAnswering();
  }, 180_000);

  it('a deployment over 10,000 devices with per-device variables', async () => {
    const body = JSON.stringify({
      stack_id: stackId,
      name: 'fabric-wide',
      target_devices: ids.map((device_id) => ({ device_id })),
      variable_values: variableValues(ids),
    });
    const created = await call('POST', '/api/config/deployments', body);
    expect(created.status, created.text.slice(0, 500)).toBe(201);
    expect(created.body).toMatchObject({ stack_id: stackId, name: 'fabric-wide' });
    await expectAnswering();
  }, 120_000);
});
