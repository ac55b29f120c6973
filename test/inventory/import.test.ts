import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestController, type TestController } from '../helpers/controller';
import { inventoryUser, type InventoryUser } from './helpers';

let c: TestController;
let a: InventoryUser;
let b: InventoryUser;
let profileId: string;

beforeAll(async () => {
  c = await startTestController();
  a = await inventoryUser(c, ['org_admin']);
  b = await inventoryUser(c, ['org_admin']);
  profileId = (await a.profile({ name: 'import' })).id;
});
afterAll(async () => c?.close());

const csv = (text: string, query = `?profile_id=${profileId}`, user = a) =>
  user.as('POST', `/api/devices/import/csv${query}`, { raw: text, contentType: 'text/csv' });
const json = (body: unknown, query = `?profile_id=${profileId}`, user = a) => user.as('POST', `/api/devices/import/json${query}`, { body });

describe('POST /api/devices/import/csv', () => {
  it('imports rows with a BOM, CRLF, quoted commas and newlines, ignoring extra columns', async () => {
    const text =
      '\uFEFFname,host,device_type,manufacturer,model,platform,site,description,rack\r\n' +
      'csv-1,10.3.0.1,vendor_ios,Vendor,C2960,ios,Berlin,"access, floor 2",R7\r\n' +
      'csv-2,csv-2.example.net,vendor_eos,Arista,7050,eos,Berlin,"line one\r\nline two",R8\r\n' +
      '"csv-3",10.3.0.3,generic,,,,,,\r\n';
    const res = await csv(text);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ imported: 3, failed: 0, errors: [] });
    const list = await a.as('GET', '/api/devices?q=csv-');
    expect(list.body.total).toBe(3);
    const one = (await a.as('GET', `/api/devices/${list.body.devices[0].id}`)).body;
    expect(one).toMatchObject({
      name: 'csv-1',
      host: '10.3.0.1',
      device_type: 'vendor_ios',
      manufacturer: 'Vendor',
      model: 'C2960',
      platform: 'ios',
      site: 'Berlin',
      site_id: null,
      description: 'access, floor 2',
      source: 'csv',
      protocol: 'ssh',
      profile_id: profileId,
      created_by: a.userId,
    });
    const two = (await a.as('GET', `/api/devices/${list.body.devices[1].id}`)).body;
    expect(two.description).toBe('line one\r\nline two');
  });

  it('reports failing rows by number (header is row 1) without stopping the import', async () => {
    const text = [
      'device_type,host,name', // columns in any order
      'vendor_ios,10.4.0.1,row-2-ok',
      'vendor_ios,,row-3-no-host',
      'vendor_ios,"10.4.0.4",row-4-quoted-ok',
      'router,10.4.0.5,row-5-bad-type',
      'vendor_ios,not a host,row-6-bad-host',
      'vendor_ios,10.4.0.7,row-2-ok',
      '',
      'vendor_ios,10.4.0.9,csv-1',
      'vendor_ios,10.4.0.10,',
      '"vendor_ios","10.4.0.11","row-11-multi',
      'line-name"',
      'vendor_ios,10.4.0.12,row-12-ok',
    ].join('\n');
    const res = await csv(text);
    expect(res.status).toBe(200);
    expect(res.body.imported).toBe(4);
    expect(res.body.failed).toBe(6);
    expect(res.body.errors).toEqual([
      { row: 3, name: 'row-3-no-host', error: 'Missing required host' },
      { row: 5, name: 'row-5-bad-type', error: expect.stringContaining("device_type 'router' is not one of") },
      { row: 6, name: 'row-6-bad-host', error: "host 'not a host' is not an IP address or a hostname" },
      { row: 7, name: 'row-2-ok', error: 'Duplicate name in this file (first at row 2)' },
      { row: 9, name: 'csv-1', error: 'Device with this name already exists' },
      { row: 10, name: '', error: 'Missing required name' },
    ]);
    expect((await a.as('GET', '/api/devices?q=row-11-multi')).body.total).toBe(1);
    expect((await a.as('GET', '/api/devices?q=row-12-ok')).body.total).toBe(1);
  });

  it('answers 400 naming missing required columns', async () => {
    const res = await csv('name,address,type\nx,10.0.0.1,generic\n');
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('IMPORT_MISSING_COLUMNS');
    expect(res.body.error).toBe('CSV header is missing required columns: host, device_type');
    expect(res.body.missing_columns).toEqual(['host', 'device_type']);
  });

  it('answers 400 for an empty file and an empty summary for a header alone', async () => {
    for (const text of ['', '\uFEFF', '\r\n\r\n']) {
      const res = await csv(text);
      expect(res.status, JSON.stringify(text)).toBe(400);
      expect(res.body.code).toBe('IMPORT_EMPTY');
    }
    expect((await csv('name,host,device_type\r\n')).body).toEqual({ imported: 0, failed: 0, errors: [] });
  });

  it('answers 400 for malformed CSV (unclosed quote) and 415 for another content type', async () => {
    const res = await csv('name,host,device_type\n"broken,10.0.0.1,generic\n');
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('IMPORT_INVALID_CSV');
    const wrongType = await a.as('POST', `/api/devices/import/csv?profile_id=${profileId}`, {
      raw: 'name,host,device_type\n',
      contentType: 'text/plain',
    });
    expect(wrongType.status).toBe(415);
    const asJson = await a.as('POST', `/api/devices/import/csv?profile_id=${profileId}`, { body: [{ name: 'x' }] });
    expect(asJson.status).toBe(415);
  });

  it('uses the default profile setting when profile_id is absent, and answers 400 without either', async () => {
    const none = await csv('name,host,device_type\nnp-1,10.5.0.1,generic\n', '');
    expect(none.status).toBe(400);
    expect(none.body.code).toBe('IMPORT_NO_PROFILE');
    expect(none.body.error).toContain('profile_id');
    const setting = await a.as('PUT', '/api/admin/settings', { body: { settings: { 'devices.default_profile_id': profileId } } });
    expect(setting.status, setting.text).toBe(200);
    const res = await csv('name,host,device_type\ndefault-1,10.5.0.1,generic\n', '');
    expect(res.body.imported).toBe(1);
    expect((await a.as('GET', '/api/devices?q=default-1')).body.devices[0].profile_id).toBe(profileId);
    const foreign = await csv('name,host,device_type\nforeign-1,10.5.0.2,generic\n', `?profile_id=${(await b.profile()).id}`);
    expect(foreign.status).toBe(400);
    expect(foreign.body.code).toBe('UNKNOWN_PROFILE');
    expect((await csv('name,host,device_type\n', '?profile_id=nope')).status).toBe(400);
  });

  it('answers 413 with a JSON error for a body over the import limit', async () => {
    const big = 'name,host,device_type\n' + 'x'.repeat(21 * 1024 * 1024);
    const res = await csv(big);
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('BODY_TOO_LARGE');
  });

  it('imports 10,000 rows in one request', async () => {
    const lines = ['name,host,device_type,manufacturer,model,platform,site,description'];
    for (let i = 0; i < 10_000; i++) lines.push(`bulk-${i},10.${(i >> 8) & 255}.${i & 255}.1,vendor_ios,Vendor,M${i % 7},ios,Site ${i % 10},`);
    lines.push('bulk-5,10.0.0.5,vendor_ios,,,,,'); // in-file duplicate, row 10002
    const res = await csv(lines.join('\n'));
    expect(res.status).toBe(200);
    expect(res.body.imported).toBe(10_000);
    expect(res.body.errors).toEqual([{ row: 10_002, name: 'bulk-5', error: 'Duplicate name in this file (first at row 7)' }]);
    expect((await a.as('GET', '/api/devices?q=bulk-&limit=1')).body.total).toBe(10_000);
    // The unfiltered total comes from the trigger-kept counter: it must equal a real count.
    const [{ count }] = await c.db('devices').where({ org_id: a.orgId }).count({ count: '*' });
    expect((await a.as('GET', '/api/devices?limit=1&q=')).body.total).toBe(Number(count));
    const again = await csv(lines.slice(0, 101).join('\n'));
    expect(again.body).toMatchObject({ imported: 0, failed: 100 });
  });

  it('reads up to 50,000 rows; more rows or fields are a 413 before the file is parsed, nothing stored', async () => {
    const before = await c.db('devices').where({ org_id: a.orgId }).count({ count: '*' });
    const rows = (n: number) => 'name,host,device_type\n' + Array.from({ length: n }, (_, i) => `cap-${i},10.9.0.1,no_such_type`).join('\n');
    const atLimit = await csv(rows(50_000));
    expect(atLimit.status).toBe(200);
    expect(atLimit.body).toMatchObject({ imported: 0, failed: 50_000 });
    const over = await csv(rows(50_001));
    expect(over.status).toBe(413);
    expect(over.body).toMatchObject({ code: 'IMPORT_TOO_MANY_ROWS', max_rows: 50_000, max_fields: 1_000_000 });
    expect(over.body.error).toBe(
      'A device import takes at most 50,000 rows and 1,000,000 fields; this CSV has 50,001 rows and 150,006 fields: split it into several files',
    );
    // Blank lines are rows too: csv-parse would spend tens of microseconds on each (minutes for 20 MiB of them).
    const blank = await csv('name,host,device_type\n' + '\r\n'.repeat(10 * 1024 * 1024 - 16));
    expect(blank.status).toBe(413);
    expect(blank.body.code).toBe('IMPORT_TOO_MANY_ROWS');
    // One row of a million empty columns: every field would be kept until the end.
    const wide = await csv('name,host,device_type\n' + ','.repeat(1_000_000));
    expect(wide.status).toBe(413);
    expect(wide.body.error).toContain('this CSV has 1 row and 1,000,004 fields');
    expect(await c.db('devices').where({ org_id: a.orgId }).count({ count: '*' })).toEqual(before);
  });

  it('counts no line break or comma inside quotes', async () => {
    // 60,000 quoted line breaks and commas: one row, over the row limit only if they were counted.
    const description = `"${'line, with a comma\n'.repeat(60_000)}"`;
    const res = await csv(`name,host,device_type,description\nquoted-1,10.9.1.1,generic,${description}\n`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ imported: 0, failed: 1, errors: [{ row: 2, name: 'quoted-1', error: 'description is longer than 2000 characters' }] });
  });
});

describe('POST /api/devices/import/json', () => {
  it('imports an array of objects with the CSV column names, row numbers counting from 1', async () => {
    const res = await json([
      { name: 'json-1', host: '10.6.0.1', device_type: 'vendor_junos', manufacturer: 'Juniper', site: 'Paris', extra: 'ignored' },
      { name: 'json-2', host: '10.6.0.2' },
      'not an object',
      { name: 'json-4', host: 10, device_type: 'generic' },
      { name: 'json-5', host: '10.6.0.5', device_type: 'generic', model: { nested: true } },
      { name: 'json-1', host: '10.6.0.6', device_type: 'generic' },
    ]);
    expect(res.status).toBe(200);
    expect(res.body.imported).toBe(1);
    expect(res.body.failed).toBe(5);
    expect(res.body.errors).toEqual([
      { row: 2, name: 'json-2', error: 'Missing required device_type' },
      { row: 3, name: '', error: 'Row must be an object with name, host and device_type' },
      { row: 4, name: 'json-4', error: "host '10' is not an IP address or a hostname" },
      { row: 5, name: 'json-5', error: 'model must be a string' },
      { row: 6, name: 'json-1', error: 'Duplicate name in this file (first at row 1)' },
    ]);
    const list = await a.as('GET', '/api/devices?source=json');
    expect(list.body.devices.map((d: { name: string }) => d.name)).toEqual(['json-1']);
    const one = (await a.as('GET', `/api/devices/${list.body.devices.find((d: { name: string }) => d.name === 'json-1').id}`)).body;
    expect(one).toMatchObject({ source: 'json', protocol: 'ssh', site: 'Paris', site_id: null, manufacturer: 'Juniper' });
  });

  it('answers 400 for a body that is not an array, malformed JSON, and an empty summary for []', async () => {
    expect((await json({ name: 'x' })).status).toBe(400);
    const bad = await a.as('POST', `/api/devices/import/json?profile_id=${profileId}`, { raw: '[{"name":', contentType: 'application/json' });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('INVALID_JSON');
    expect((await json([])).body).toEqual({ imported: 0, failed: 0, errors: [] });
  });

  it('imports 10,000 rows in one request and refuses more than 50,000 rows', async () => {
    const rows = Array.from({ length: 10_000 }, (_, i) => ({
      name: `json-bulk-${i}`,
      host: `10.8.${(i >> 8) & 255}.${i & 255}`,
      device_type: 'generic',
    }));
    const res = await json(rows);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ imported: 10_000, failed: 0, errors: [] });
    const over = await json(Array.from({ length: 50_001 }, () => ({})));
    expect(over.status).toBe(400);
    expect(over.body).toMatchObject({ code: 'VALIDATION_FAILED', error: 'body must NOT have more than 50000 items' });
  });

  it('imports into the caller’s organization only', async () => {
    await json([{ name: 'org-a-only', host: '10.7.0.1', device_type: 'generic' }]);
    expect((await b.as('GET', '/api/devices?q=org-a-only')).body.total).toBe(0);
    const bProfile = await b.profile();
    const res = await json([{ name: 'org-a-only', host: '10.7.0.1', device_type: 'generic' }], `?profile_id=${bProfile.id}`, b);
    expect(res.body.imported).toBe(1);
  });
});
