import type { Knex } from 'knex';
import type { Db } from '../db/knex';
import type { TemplateVariable } from './engine';

export interface TemplateRow {
  id: string;
  org_id: string;
  name: string;
  description: string;
  platform: string;
  config_format: 'json' | 'xml' | 'cli';
  source: string;
  operation: 'replace' | 'merge' | 'delete';
  target_path: string | null;
  current_version: number;
  variables: TemplateVariable[];
  created_at: Date;
  updated_at: Date;
}

const SUMMARY = [
  'id',
  'name',
  'description',
  'platform',
  'config_format',
  'operation',
  'target_path',
  'current_version',
  'variables',
  'created_at',
  'updated_at',
];

/** SQL for config templates and their versions; every query is scoped to the organization. */
export class TemplateStore {
  constructor(private readonly db: Db) {}

  list(orgId: string, filter: { platform?: string; limit: number; offset: number }) {
    const query = this.db('config_templates')
      .where({ org_id: orgId })
      .select(SUMMARY)
      .orderBy([{ column: 'name' }, { column: 'created_at' }]);
    if (filter.platform) query.where({ platform: filter.platform });
    return query.limit(filter.limit).offset(filter.offset);
  }

  find(orgId: string, id: string, trx: Knex | Knex.Transaction = this.db, lock = false): Promise<TemplateRow | undefined> {
    const query = trx('config_templates').where({ org_id: orgId, id }).first();
    if (lock) query.forUpdate();
    return query;
  }

  /** Templates by id, for stacks and deployments (only the organization's). */
  findMany(orgId: string, ids: string[]): Promise<TemplateRow[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.db('config_templates').where({ org_id: orgId }).whereIn('id', ids).select('*');
  }

  async insert(row: Record<string, unknown>, createdBy: string): Promise<TemplateRow> {
    return this.db.transaction(async (trx) => {
      const [template] = await trx('config_templates').insert(this.encode(row)).returning('*');
      await trx('config_template_versions').insert({
        template_id: template.id,
        version: 1,
        source: template.source,
        variables: JSON.stringify(template.variables),
        created_by: createdBy,
      });
      return template as TemplateRow;
    });
  }

  /**
   * Applies changes under a row lock; `change` sees the current row and says what to write and
   * whether the source changed (then a version is added and current_version goes up).
   */
  async update(
    orgId: string,
    id: string,
    change: (current: TemplateRow, trx: Knex.Transaction) => Promise<{ fields: Record<string, unknown>; newSource: boolean }>,
    createdBy: string,
  ): Promise<TemplateRow | undefined> {
    return this.db.transaction(async (trx) => {
      const current = await this.find(orgId, id, trx, true);
      if (!current) return undefined;
      const { fields, newSource } = await change(current, trx);
      if (newSource) fields.current_version = current.current_version + 1;
      const [updated] = await trx('config_templates')
        .where({ org_id: orgId, id })
        .update({ ...this.encode(fields), updated_at: trx.fn.now() })
        .returning('*');
      if (newSource) {
        await trx('config_template_versions').insert({
          template_id: id,
          version: updated.current_version,
          source: updated.source,
          variables: JSON.stringify(updated.variables),
          created_by: createdBy,
        });
      }
      return updated as TemplateRow;
    });
  }

  async delete(orgId: string, id: string): Promise<boolean> {
    return (await this.db('config_templates').where({ org_id: orgId, id }).delete()) > 0;
  }

  listVersions(templateId: string) {
    return this.db('config_template_versions')
      .where({ template_id: templateId })
      .orderBy('version', 'desc')
      .select('version', 'source', 'variables', 'created_by', 'created_at');
  }

  findVersion(templateId: string, version: number) {
    return this.db('config_template_versions')
      .where({ template_id: templateId, version })
      .first('version', 'source', 'variables', 'created_by', 'created_at');
  }

  private encode(row: Record<string, unknown>): Record<string, unknown> {
    return 'variables' in row ? { ...row, variables: JSON.stringify(row.variables) } : row;
  }
}
