// GET /api/devices?sort=&order= (beyond API.md): every column both ways, ties, paging, bad values, isolation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEVICE_SORTS } from '../../controller/src/devices/list-order';
import { startTestController, type TestController } from '../helpers/controller';
import { inventoryUser, type InventoryUser } from './helpers';

let c: TestController;
let a: InventoryUser;
let b: InventoryUser;

interface Summary {
  id: string;
  name: string;
  host: string;
  device_type: string;
  manufacturer: string;
  model: string;
  site: string;
  source: string;
}

// Mixed case, blanks and ties on every column, so order, case-insensitivity and the id tie-break all show.
const ROWS = [
  {
    name: 'sw-03',
    host: '10.0.0.3',
    device_type: 'vendor_eos',
    manufacturer: 'arista',
    model: '7050',
    platform: 'eos',
    site: 'Berlin',
    source: 'import',
  },
  {
    name: 'sw-01',
    host: '10.0.0.1',
    device_type: 'vendor_ios',
    manufacturer: 'Cisco',
    model: 'C9300',
    platform: 'ios',
    site: 'amsterdam',
    source: 'manual',
  },
  {
    name: 'sw-05',
    host: 'core.example.net',
    device_type: 'vendor_eos',
    manufacturer: 'ARISTA',
    model: '7050',
    platform: 'eos',
    site: '',
    source: 'manual',
  },
  {
    name: 'sw-02',
    host: '10.0.0.2',
    device_type: 'vendor_junos',
    manufacturer: 'Juniper',
    model: '',
    platform: '',
    site: 'Berlin',
    source: 'ansible',
  },
  { name: 'sw-04', host: '10.0.0.10', device_type: 'generic', manufacturer: '', model: 'MX204', platform: 'junos', site: 'Zurich', source: 'import' },
];

/** The expected order: the key (lower-cased for vendor and site), ties by id, in the direction asked; C collation like the test database. */
function expected(rows: Summary[], sort: string, order: 'asc' | 'desc'): string[] {
  const key = (r: Record<string, string>) => (sort === 'manufacturer' || sort === 'site' ? r[sort].toLowerCase() : r[sort]);
  const compare = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  const sorted = [...rows].sort((x, y) => compare(key(x as never), key(y as never)) || compare(x.id, y.id));
  return (order === 'asc' ? sorted : sorted.reverse()).map((r) => r.name);
}

const names = (res: { body: { devices: { name: string }[] } }) => res.body.devices.map((d) => d.name);

let created: Summary[] = [];

beforeAll(async () => {
  c = await startTestController();
  a = await inventoryUser(c);
  b = await inventoryUser(c);
  const profileId = (await a.profile()).id;
  created = [];
  for (const row of ROWS) created.push((await a.device(profileId, row)) as unknown as Summary);
  // Another organization's devices sort among these by every column; none may show up.
  const other = (await b.profile()).id;
  for (const row of ROWS) await b.device(other, { ...row, name: `b-${row.name}` });
});
afterAll(async () => c?.close());

describe('GET /api/devices sort and order', () => {
  it('orders by every sortable column, both ways, ties broken by id', async () => {
    for (const sort of DEVICE_SORTS) {
      for (const order of ['asc', 'desc'] as const) {
        const res = await a.as('GET', `/api/devices?sort=${sort}&order=${order}`);
        expect(res.status, `${sort} ${order}`).toBe(200);
        expect(names(res), `${sort} ${order}`).toEqual(expected(created, sort, order));
        expect(res.body.total).toBe(ROWS.length);
      }
    }
  });

  it('compares vendor and site case-insensitively', async () => {
    const vendors = (await a.as('GET', '/api/devices?sort=manufacturer')).body.devices.map((d: Summary) => d.manufacturer);
    expect(vendors.map((v: string) => v.toLowerCase())).toEqual(['', 'arista', 'arista', 'cisco', 'juniper']);
    const sites = (await a.as('GET', '/api/devices?sort=site&order=desc')).body.devices.map((d: Summary) => d.site);
    expect(sites).toEqual(['Zurich', 'Berlin', 'Berlin', 'amsterdam', '']);
  });

  it('keeps API.md name order without the parameters; order alone sorts by name; sort alone is ascending', async () => {
    const byName = [...ROWS.map((r) => r.name)].sort();
    expect(names(await a.as('GET', '/api/devices'))).toEqual(byName);
    expect(names(await a.as('GET', '/api/devices?order=desc'))).toEqual([...byName].reverse());
    expect(names(await a.as('GET', '/api/devices?sort=host'))).toEqual(expected(created, 'host', 'asc'));
  });

  it('pages through a sorted list without overlap or gaps, filters still applying', async () => {
    const seen: string[] = [];
    for (let offset = 0; offset < ROWS.length; offset += 2) {
      seen.push(...names(await a.as('GET', `/api/devices?sort=model&order=desc&limit=2&offset=${offset}`)));
    }
    expect(seen).toEqual(expected(created, 'model', 'desc'));
    const arista = await a.as('GET', '/api/devices?vendor=arista&sort=host&order=desc');
    expect(names(arista)).toEqual(
      expected(
        created.filter((r) => r.manufacturer.toLowerCase() === 'arista'),
        'host',
        'desc',
      ),
    );
    expect(arista.body.total).toBe(2);
  });

  it('answers 400 naming the allowed values for an unknown column or direction', async () => {
    const sort = await a.as('GET', '/api/devices?sort=password');
    expect(sort.status).toBe(400);
    expect(sort.body.code).toBe('VALIDATION_FAILED');
    expect(sort.body.error).toBe(`querystring.sort must be one of: ${DEVICE_SORTS.join(', ')}`);
    const order = await a.as('GET', '/api/devices?sort=name&order=up');
    expect(order.status).toBe(400);
    expect(order.body.error).toBe('querystring.order must be one of: asc, desc');
    for (const query of ['sort=', 'sort=NAME', 'order=ASC', 'sort=name;drop', 'sort=id']) {
      expect((await a.as('GET', `/api/devices?${query}`)).status, query).toBe(400);
    }
  });

  it("another organization's sorted lists hold only its own devices", async () => {
    for (const sort of DEVICE_SORTS) {
      const res = await b.as('GET', `/api/devices?sort=${sort}&order=desc`);
      expect(res.body.total).toBe(ROWS.length);
      expect(
        res.body.devices.every((d: { org_id: string; name: string }) => d.org_id === b.orgId && d.name.startsWith('b-')),
        sort,
      ).toBe(true);
    }
  });

  it('the OpenAPI document lists the allowed values', async () => {
    const doc = await c.request('GET', '/api/docs/json');
    const params = doc.body.paths['/api/devices'].get.parameters as { name: string; schema: { enum?: string[] } }[];
    expect(params.find((p) => p.name === 'sort')?.schema.enum).toEqual([...DEVICE_SORTS]);
    expect(params.find((p) => p.name === 'order')?.schema.enum).toEqual(['asc', 'desc']);
  });
});
