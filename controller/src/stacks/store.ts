import type { Db } from '../db/knex';
import { OrgRecordTable } from '../db/org-record-table';

export interface StackService {
  template_id: string;
  order: number;
  variables?: Record<string, unknown>;
  api_variables?: Record<string, unknown>;
}

export interface StackRow {
  id: string;
  org_id: string;
  name: string;
  description: string;
  services: StackService[];
  atomic: boolean;
  shared: boolean;
  variable_config: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

/** A device as stacks see it: the fields API lookups may read, and its site. */
export interface StackDevice {
  id: string;
  name: string;
  host: string;
  device_type: string;
  manufacturer: string;
  model: string;
  platform: string;
  site: string;
  site_id: string | null;
  serial_number: string;
  asset_tag: string;
  description: string;
  protocol: string;
  tags: string[];
  metadata: Record<string, unknown>;
  profile_id: string;
  /** The connection profile's automation transport (gnmi, netconf or null). */
  automation_transport: 'gnmi' | 'netconf' | null;
  site_name: string | null;
  site_description: string | null;
  site_location: string | null;
}

/** SQL for stacks, and the device reads that stack rendering needs; scoped to the organization. */
export class StackStore extends OrgRecordTable<StackRow> {
  constructor(db: Db) {
    super(db, 'stacks', ['services', 'variable_config']);
  }

  /** The organization's devices among `ids` (unknown and foreign ids are left out). */
  async devices(orgId: string, ids: string[]): Promise<Map<string, StackDevice>> {
    if (ids.length === 0) return new Map();
    const rows: StackDevice[] = await this.db('devices as d')
      .leftJoin('sites as s', 's.id', 'd.site_id')
      .leftJoin('connection_profiles as p', 'p.id', 'd.profile_id')
      .where('d.org_id', orgId)
      .whereRaw('d.id = ANY(?::uuid[])', [ids])
      .select(
        'd.id',
        'd.name',
        'd.host',
        'd.device_type',
        'd.manufacturer',
        'd.model',
        'd.platform',
        'd.site',
        'd.site_id',
        'd.serial_number',
        'd.asset_tag',
        'd.description',
        'd.protocol',
        'd.tags',
        'd.metadata',
        'd.profile_id',
        'p.automation_transport',
        's.name as site_name',
        's.description as site_description',
        's.location as site_location',
      );
    return new Map(rows.map((row) => [row.id, row]));
  }
}
