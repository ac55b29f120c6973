import type { Db } from '../db/knex';
import { OrgRecordTable } from '../db/org-record-table';

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

/** SQL for instances (saved deployments), scoped to the organization. */
export class InstanceStore extends OrgRecordTable<InstanceRow> {
  constructor(db: Db) {
    super(db, 'instances', ['target_devices', 'variable_values']);
  }

  async existingDevices(orgId: string, ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows: { id: string }[] = await this.db('devices').where({ org_id: orgId }).whereRaw('id = ANY(?::uuid[])', [ids]).select('id');
    return new Set(rows.map((r) => r.id));
  }
}
