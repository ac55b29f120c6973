import type { Db } from './knex';

/**
 * Writes shared by the inventory tables that are scoped to an organization and unique by
 * (org_id, name): connection_profiles, sites, devices, netbox_sources.
 */
export class NamedOrgTable {
  constructor(
    protected readonly db: Db,
    private readonly table: string,
  ) {}

  /** The new row's id, or undefined when the name is taken in the organization. */
  async insert(row: Record<string, unknown>): Promise<string | undefined> {
    const [created] = await this.db(this.table).insert(row).onConflict(['org_id', 'name']).ignore().returning('id');
    return created?.id;
  }

  /** Rows changed: 0 when the id is not in the organization. */
  update(orgId: string, id: string, fields: Record<string, unknown>): Promise<number> {
    return this.db(this.table)
      .where({ org_id: orgId, id })
      .update({ ...fields, updated_at: this.db.fn.now() });
  }

  delete(orgId: string, id: string): Promise<number> {
    return this.db(this.table).where({ org_id: orgId, id }).delete();
  }

  async exists(orgId: string, id: string): Promise<boolean> {
    return (await this.db(this.table).where({ org_id: orgId, id }).first('id')) !== undefined;
  }
}
