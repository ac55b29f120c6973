/** SQL of the topology: an organization's devices, their neighbor records and interface addresses. */
import type { Db } from '../db/knex';

export interface TopologyDevice {
  id: string;
  name: string;
  host: string;
  device_type: string;
  site_id: string | null;
}

export class TopologyStore {
  constructor(private readonly db: Db) {}

  async siteExists(orgId: string, siteId: string): Promise<boolean> {
    return Boolean(await this.db('sites').where({ org_id: orgId, id: siteId }).first('id'));
  }

  async devices(orgId: string): Promise<TopologyDevice[]> {
    return this.db('devices').where({ org_id: orgId }).orderBy('name').select('id', 'name', 'host', 'device_type', 'site_id');
  }

  /** Neighbor records of the given devices (all of the organization's when ids is null). */
  async neighbors(orgId: string, deviceIds: string[] | null): Promise<{ device_id: string; data: Record<string, unknown> }[]> {
    return this.db('discovery_sections as s')
      .joinRaw('CROSS JOIN LATERAL jsonb_array_elements(s.records) WITH ORDINALITY AS e(data, n)')
      .where({ 's.org_id': orgId, 's.kind': 'neighbors' })
      .modify((q) => deviceIds && q.whereRaw('s.device_id = ANY(?::uuid[])', [deviceIds]))
      .orderBy(['s.device_id', 's.section', 'e.n'])
      .select('s.device_id', 'e.data');
  }

  /** Every interface address discovered on the organization's devices (without the prefix length). */
  async interfaceAddresses(orgId: string): Promise<{ device_id: string; address: string }[]> {
    const rows = await this.db.raw(
      `SELECT DISTINCT s.device_id, split_part(a.value, '/', 1) AS address
         FROM discovery_sections s, jsonb_array_elements(s.records) AS r(data), jsonb_array_elements_text(r.data->'addresses') AS a(value)
        WHERE s.org_id = ? AND s.kind = 'interfaces'`,
      [orgId],
    );
    return rows.rows;
  }
}
