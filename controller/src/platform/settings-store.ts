import type { Db } from '../db/knex';

export interface SettingRow {
  scope: string;
  key: string;
  value: unknown;
}

/** SQL for the settings table: one row per (scope, key), scope an org id or 'global'. */
export class SettingsStore {
  constructor(private readonly db: Db) {}

  rows(scopes: string[], keys?: string[]): Promise<SettingRow[]> {
    return this.db('settings')
      .whereIn('scope', scopes)
      .modify((q) => {
        if (keys) q.whereIn('key', keys);
      });
  }

  /** Writes each value (JSON text), replacing what the scope held. */
  async upsert(writes: { scope: string; key: string; value: string }[]): Promise<void> {
    await this.db('settings')
      .insert(writes.map((w) => ({ ...w, updated_at: this.db.fn.now() })))
      .onConflict(['scope', 'key'])
      .merge();
  }

  /** Writes a value unless the scope already holds one (what admins changed wins). */
  async insertIfAbsent(write: { scope: string; key: string; value: string }): Promise<void> {
    await this.db('settings').insert(write).onConflict(['scope', 'key']).ignore();
  }

  /** Whether `table` holds a row with this id in the organization. */
  async orgRowExists(table: string, id: string, orgId: string): Promise<boolean> {
    return Boolean(await this.db(table).where({ id, org_id: orgId }).first('id'));
  }
}
