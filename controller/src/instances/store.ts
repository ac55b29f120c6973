import type { Db } from '../db/knex';

export interface InstanceRow {
  id: string;
  org_id: string;
  stack_id: string;
  name: string;
  description: string;
  target_devices: { device_id: string }[];
  variable_values: Record<string, unknown>;
  last_deployment_id: string | null;
  created_at: Date;
  updated_at: Date;
}

const JSON_COLUMNS = ['target_devices', 'variable_values'];
const encode = (row: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(row).map(([k, v]) => [k, JSON_COLUMNS.includes(k) ? JSON.stringify(v) : v]));

/** SQL for instances (saved deployments), scoped to the organization. */
export class InstanceStore {
  constructor(private readonly db: Db) {}

  list(orgId: string, limit: number, offset: number): Promise<InstanceRow[]> {
    return this.db('instances').where({ org_id: orgId }).orderBy([{ column: 'name' }, { column: 'created_at' }]).limit(limit).offset(offset).select('*');
  }

  find(orgId: string, id: string): Promise<InstanceRow | undefined> {
    return this.db('instances').where({ org_id: orgId, id }).first();
  }

  async insert(row: Record<string, unknown>): Promise<InstanceRow> {
    const [instance] = await this.db('instances').insert(encode(row)).returning('*');
    return instance;
  }

  async update(orgId: string, id: string, fields: Record<string, unknown>): Promise<InstanceRow | undefined> {
    const [instance] = await this.db('instances').where({ org_id: orgId, id }).update({ ...encode(fields), updated_at: this.db.fn.now() }).returning('*');
    return instance;
  }

  async delete(orgId: string, id: string): Promise<boolean> {
    return (await this.db('instances').where({ org_id: orgId, id }).delete()) > 0;
  }

  async existingDevices(orgId: string, ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows: { id: string }[] = await this.db('devices').where({ org_id: orgId }).whereRaw('id = ANY(?::uuid[])', [ids]).select('id');
    return new Set(rows.map((r) => r.id));
  }
}
