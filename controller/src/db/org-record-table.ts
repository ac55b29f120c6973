import type { Db } from './knex';

/**
 * The org-scoped CRUD that stacks, instances and scheduled tasks share: every read and write
 * filtered by org_id, jsonb columns encoded on the way in, rows returned as stored.
 */
export class OrgRecordTable<Row> {
  constructor(
    readonly db: Db,
    private readonly table: string,
    private readonly jsonColumns: string[],
    private readonly order: string[] = ['name', 'created_at'],
  ) {}

  private encode(row: Record<string, unknown>): Record<string, unknown> {
    return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, this.jsonColumns.includes(k) ? JSON.stringify(v) : v]));
  }

  list(orgId: string, limit: number, offset: number, where: Record<string, unknown> = {}): Promise<Row[]> {
    return this.db(this.table)
      .where({ ...where, org_id: orgId })
      .orderBy(this.order.map((column) => ({ column })))
      .limit(limit)
      .offset(offset)
      .select('*');
  }

  find(orgId: string, id: string): Promise<Row | undefined> {
    return this.db(this.table).where({ org_id: orgId, id }).first();
  }

  async insert(row: Record<string, unknown>): Promise<Row> {
    const [created] = await this.db(this.table).insert(this.encode(row)).returning('*');
    return created;
  }

  async update(orgId: string, id: string, fields: Record<string, unknown>): Promise<Row | undefined> {
    const [updated] = await this.db(this.table)
      .where({ org_id: orgId, id })
      .update({ ...this.encode(fields), updated_at: this.db.fn.now() })
      .returning('*');
    return updated;
  }

  async delete(orgId: string, id: string): Promise<boolean> {
    return (await this.db(this.table).where({ org_id: orgId, id }).delete()) > 0;
  }
}
