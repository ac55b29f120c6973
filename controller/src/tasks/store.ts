import type { Knex } from 'knex';
import type { Db } from '../db/knex';
import { OrgRecordTable } from '../db/org-record-table';

export interface TaskRow {
  id: string;
  org_id: string;
  name: string;
  type: 'deployment' | 'snapshot' | 'backup';
  cron: string;
  timezone: string;
  enabled: boolean;
  instance_id: string | null;
  snapshot_id: string | null;
  device_filter: { site_id?: string; device_type?: string; device_ids?: string[] };
  method: 'cli' | 'structured' | 'both';
  next_run_at: Date | null;
  last_run_at: Date | null;
  last_status: string | null;
  last_error: string | null;
  last_result: Record<string, unknown> | null;
  created_by: string | null;
  created_by_name: string;
  created_at: Date;
  updated_at: Date;
}

/** SQL for scheduled tasks and their runs. */
export class TaskStore extends OrgRecordTable<TaskRow> {
  constructor(db: Db) {
    super(db, 'scheduled_tasks', ['device_filter', 'last_result']);
  }

  runs(taskId: string, limit: number, offset: number) {
    return this.db('scheduled_task_runs')
      .where({ task_id: taskId })
      .orderBy('scheduled_for', 'desc')
      .limit(limit)
      .offset(offset)
      .select('scheduled_for', 'controller', 'status', 'error', 'result', 'started_at', 'finished_at');
  }

  instanceExists(orgId: string, id: string) {
    return this.db('instances').where({ org_id: orgId, id }).first('id');
  }

  snapshotExists(orgId: string, id: string) {
    return this.db('snapshots').where({ org_id: orgId, id }).first('id');
  }

  siteExists(orgId: string, id: string) {
    return this.db('sites').where({ org_id: orgId, id }).first('id');
  }

  /** The ids among `ids` that are not devices of the organization. */
  async missingDevices(orgId: string, ids: string[]): Promise<string[]> {
    const rows: { id: string }[] = await this.db
      .select('wanted.id')
      .fromRaw(this.db.raw('unnest(?::uuid[]) AS wanted(id)', [ids]))
      .whereNotExists(this.db('devices').where('devices.org_id', orgId).whereRaw('devices.id = wanted.id'));
    return rows.map((r) => r.id);
  }

  /** Device ids of a backup task's filter (all of the organization's devices when empty). */
  async filterDevices(orgId: string, filter: TaskRow['device_filter']): Promise<string[]> {
    const q = this.db('devices').where({ org_id: orgId });
    if (filter.site_id) q.where({ site_id: filter.site_id });
    if (filter.device_type) q.where({ device_type: filter.device_type });
    if (filter.device_ids) q.whereRaw('id = ANY(?::uuid[])', [filter.device_ids]);
    const rows: { id: string }[] = await q.orderBy('name').select('id');
    return rows.map((r) => r.id);
  }

  /** The task creator's account as it is now (the scheduler checks it before every run). */
  creator(
    userId: string,
  ): Promise<{ username: string; is_active: boolean; roles: string[]; is_platform_admin: boolean; home_org_id: string } | undefined> {
    return this.db('users').where({ id: userId }).first('username', 'is_active', 'roles', 'is_platform_admin', 'home_org_id');
  }

  due(limit: number): Promise<TaskRow[]> {
    return this.db('scheduled_tasks')
      .where({ enabled: true })
      .where('next_run_at', '<=', this.db.fn.now())
      .orderBy('next_run_at')
      .limit(limit)
      .select('*');
  }

  /**
   * Claims one run: the (task, scheduled_for) primary key lets exactly one controller insert it;
   * the winner moves next_run_at on in the same transaction. False when another one won.
   */
  async claim(task: TaskRow, controller: string, next: Date | null): Promise<boolean> {
    return this.db.transaction(async (trx: Knex.Transaction) => {
      const inserted = await trx('scheduled_task_runs')
        .insert({ task_id: task.id, scheduled_for: task.next_run_at, controller })
        .onConflict(['task_id', 'scheduled_for'])
        .ignore()
        .returning('task_id');
      if (inserted.length === 0) return false;
      await trx('scheduled_tasks')
        .where({ id: task.id })
        .update({ next_run_at: next, last_run_at: trx.fn.now(), last_status: 'running', last_error: null, updated_at: trx.fn.now() });
      return true;
    });
  }

  async finishRun(
    task: TaskRow,
    status: 'succeeded' | 'failed' | 'skipped',
    error: string | null,
    result: Record<string, unknown> | null,
  ): Promise<void> {
    await this.db.transaction(async (trx) => {
      await trx('scheduled_task_runs')
        .where({ task_id: task.id, scheduled_for: task.next_run_at })
        .update({ status, error, result: result ? JSON.stringify(result) : null, finished_at: trx.fn.now() });
      await trx('scheduled_tasks')
        .where({ id: task.id })
        .update({ last_status: status, last_error: error, last_result: result ? JSON.stringify(result) : null });
    });
  }
}
