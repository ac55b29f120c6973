import { randomUUID } from 'node:crypto';
import { CronExpressionParser } from 'cron-parser';
import type { FastifyBaseLogger } from 'fastify';
import type { AuditService } from '../platform/audit-service';
import type { AuthContext } from '../auth/auth-service';
import { permissionsFor } from '../auth/permissions';
import { appError } from '../errors/app-error';
import type { InstanceService } from '../instances/service';
import type { SnapshotService } from '../configs/snapshot-service';
import type { TaskRow, TaskStore } from './store';

export interface TaskInput {
  name?: string;
  type?: 'deployment' | 'snapshot' | 'backup';
  cron?: string;
  timezone?: string;
  enabled?: boolean;
  instance_id?: string;
  snapshot_id?: string;
  device_filter?: TaskRow['device_filter'];
  method?: 'cli' | 'structured' | 'both';
}

/** What every task type needs of the user it runs as (the permission of the /api/tasks routes). */
export const TASK_PERMISSION = 'devices.access' as const;

const MACROS = ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly'];

/** The next run of a cron expression after `after`, in its time zone; throws INVALID_SCHEDULE. */
export function nextRun(cron: string, timezone: string, after = new Date()): Date {
  const text = cron.trim();
  const fields = text.split(/\s+/).length;
  if (!MACROS.includes(text.toLowerCase()) && fields !== 5 && fields !== 6) {
    throw appError(
      'INVALID_SCHEDULE',
      `Invalid cron expression '${cron}': it needs 5 fields (minute hour day month weekday) or 6 with seconds first, not ${fields}`,
    );
  }
  try {
    new Intl.DateTimeFormat('en', { timeZone: timezone });
  } catch {
    throw appError('INVALID_SCHEDULE', `Unknown time zone '${timezone}'`);
  }
  try {
    return CronExpressionParser.parse(text, { currentDate: after, tz: timezone }).next().toDate();
  } catch (err) {
    throw appError('INVALID_SCHEDULE', `Invalid cron expression '${cron}': ${(err as Error).message}`);
  }
}

/**
 * Scheduled tasks: CRUD, and the scheduler every controller runs. A run is claimed by inserting
 * its (task, scheduled time) row, so it fires once however many controllers see it due; the
 * task then runs as the user who created it, in its organization.
 */
export class TaskService {
  private timer: NodeJS.Timeout | null = null;
  private ticking = false;
  private readonly controllerId = randomUUID();

  constructor(
    readonly store: TaskStore,
    private readonly snapshots: SnapshotService,
    private readonly instances: InstanceService,
    private readonly audit: AuditService,
    private readonly log: FastifyBaseLogger,
  ) {}

  async get(orgId: string, id: string): Promise<TaskRow> {
    const task = await this.store.find(orgId, id);
    if (!task) throw appError('TASK_NOT_FOUND');
    return task;
  }

  private async checkTarget(orgId: string, type: TaskRow['type'], input: TaskInput): Promise<void> {
    if (type === 'backup' && input.device_filter) await this.checkFilter(orgId, input.device_filter);
    if (type === 'deployment') {
      if (!input.instance_id) throw appError('INVALID_TASK_TARGET', 'A deployment task needs instance_id (the instance to deploy)');
      if (!(await this.store.instanceExists(orgId, input.instance_id)))
        throw appError('INVALID_TASK_TARGET', `Instance ${input.instance_id} not found`);
    } else if (type === 'snapshot') {
      if (!input.snapshot_id) throw appError('INVALID_TASK_TARGET', 'A snapshot task needs snapshot_id (the snapshot to collect)');
      if (!(await this.store.snapshotExists(orgId, input.snapshot_id)))
        throw appError('INVALID_TASK_TARGET', `Snapshot ${input.snapshot_id} not found`);
    }
  }

  /** A backup filter's ids must be the organization's own: 400 rather than a filter that silently matches less. */
  private async checkFilter(orgId: string, filter: NonNullable<TaskInput['device_filter']>): Promise<void> {
    if (filter.site_id && !(await this.store.siteExists(orgId, filter.site_id)))
      throw appError('UNKNOWN_REFERENCE', `device_filter.site_id: no site ${filter.site_id} in this organization`);
    const missing = filter.device_ids ? await this.store.missingDevices(orgId, filter.device_ids) : [];
    if (missing.length) {
      const shown = missing.slice(0, 5).join(', ') + (missing.length > 5 ? ` and ${missing.length - 5} more` : '');
      throw appError('UNKNOWN_REFERENCE', `device_filter.device_ids: no device ${shown} in this organization`);
    }
  }

  async create(me: AuthContext, input: Required<Pick<TaskInput, 'name' | 'type' | 'cron'>> & TaskInput): Promise<TaskRow> {
    const timezone = input.timezone ?? 'UTC';
    const enabled = input.enabled ?? true;
    const next = nextRun(input.cron, timezone);
    await this.checkTarget(me.orgId, input.type, input);
    const task = await this.store.insert({
      org_id: me.orgId,
      name: input.name.trim(),
      type: input.type,
      cron: input.cron.trim(),
      timezone,
      enabled,
      instance_id: input.type === 'deployment' ? input.instance_id : null,
      snapshot_id: input.type === 'snapshot' ? input.snapshot_id : null,
      device_filter: input.type === 'backup' ? (input.device_filter ?? {}) : {},
      method: input.method ?? 'both',
      next_run_at: enabled ? next : null,
      created_by: me.userId,
      created_by_name: me.username,
    });
    await this.audit.byActor(me, 'task.created', { task_id: task.id, type: task.type, cron: task.cron });
    return task;
  }

  async update(me: AuthContext, id: string, input: TaskInput): Promise<TaskRow> {
    const current = await this.get(me.orgId, id);
    const merged = { ...current, ...Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) } as TaskRow;
    const next = nextRun(merged.cron, merged.timezone);
    if (input.instance_id !== undefined || input.snapshot_id !== undefined || input.device_filter !== undefined)
      await this.checkTarget(me.orgId, current.type, merged as TaskInput);
    const fields: Record<string, unknown> = {};
    for (const key of ['name', 'cron', 'timezone', 'enabled', 'method'] as const) if (input[key] !== undefined) fields[key] = input[key];
    // Only a backup task reads a device filter (checked above); another kind keeps none, as on create.
    if (current.type === 'backup' && input.device_filter !== undefined) fields.device_filter = input.device_filter;
    if (current.type === 'deployment' && input.instance_id) fields.instance_id = input.instance_id;
    if (current.type === 'snapshot' && input.snapshot_id) fields.snapshot_id = input.snapshot_id;
    if (input.cron !== undefined || input.timezone !== undefined || input.enabled !== undefined) fields.next_run_at = merged.enabled ? next : null;
    const task = await this.store.update(me.orgId, id, fields);
    if (!task) throw appError('TASK_NOT_FOUND');
    await this.audit.byActor(me, 'task.updated', { task_id: id, fields: Object.keys(input) });
    return task;
  }

  async delete(me: AuthContext, id: string): Promise<void> {
    if (!(await this.store.delete(me.orgId, id))) throw appError('TASK_NOT_FOUND');
    await this.audit.byActor(me, 'task.deleted', { task_id: id });
  }

  // ---- scheduler ----------------------------------------------------------------------------

  start(tickMs: number): void {
    this.timer = setInterval(() => void this.tick(), tickMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One pass: claims every due run this controller wins, and fires it. */
  async tick(): Promise<number> {
    if (this.ticking) return 0;
    this.ticking = true;
    let fired = 0;
    try {
      for (const task of await this.store.due(100)) {
        let next: Date | null;
        try {
          next = nextRun(task.cron, task.timezone);
        } catch {
          next = null; // an expression that no longer parses stops the task (the run still fires)
        }
        if (!(await this.store.claim(task, this.controllerId, next))) continue;
        fired += 1;
        await this.fire(task);
      }
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'scheduled task pass failed');
    } finally {
      this.ticking = false;
    }
    return fired;
  }

  /**
   * The caller a run acts as: the task's creator with the permissions they hold now, or why the
   * run may not happen (creator gone, disabled, moved out of the organization, or without the
   * permission), so disabling a user or taking a role away also stops what they scheduled.
   */
  private async runAs(task: TaskRow): Promise<AuthContext | string> {
    const who = task.created_by_name || 'its creator';
    const creator = task.created_by ? await this.store.creator(task.created_by) : undefined;
    if (!creator) return `not run: ${who} no longer exists; an administrator recreates the task under an active user`;
    if (!creator.is_active) return `not run: ${who} is disabled; the task runs again once the account is enabled`;
    if (creator.home_org_id !== task.org_id && !creator.is_platform_admin) return `not run: ${who} no longer belongs to this organization`;
    const permissions = permissionsFor(creator.roles, creator.is_platform_admin);
    if (!permissions.includes(TASK_PERMISSION)) return `not run: ${who} no longer has the ${TASK_PERMISSION} permission`;
    return {
      userId: task.created_by!,
      username: `${creator.username} (scheduled task ${task.name})`,
      orgId: task.org_id,
      homeOrgId: task.org_id,
      sessionId: `task:${task.id}`,
      isPlatformAdmin: false,
      roles: creator.roles,
      permissions,
    };
  }

  private async fire(task: TaskRow): Promise<void> {
    const me = await this.runAs(task).catch((err: Error) => `not run: the creator could not be read (${err.message})`);
    if (typeof me === 'string') {
      await this.store.finishRun(task, 'skipped', me, null).catch(() => undefined);
      this.log.warn({ task: task.id, reason: me }, 'scheduled task skipped');
      return;
    }
    try {
      let result: Record<string, unknown>;
      const { snapshots } = this;
      if (task.type === 'deployment') {
        if (!task.instance_id) throw new Error('the task has no instance');
        const deployment = await this.instances.deploy(me, task.instance_id, ' (scheduled)');
        result = { deployment_id: deployment.id };
      } else if (task.type === 'snapshot') {
        if (!task.snapshot_id) throw new Error('the task has no snapshot');
        result = { snapshot_id: task.snapshot_id, ...(await snapshots!.collect(me, task.snapshot_id)) };
      } else {
        const ids = await this.store.filterDevices(task.org_id, task.device_filter ?? {});
        if (ids.length === 0) throw new Error("no device matches the task's device filter");
        result = { ...(await snapshots!.bulkPull(me, ids, task.method)) };
      }
      await this.store.finishRun(task, 'succeeded', null, result);
      this.log.info({ task: task.id, type: task.type, result }, 'scheduled task fired');
    } catch (err) {
      const message = (err as Error).message ?? String(err);
      await this.store.finishRun(task, 'failed', message, null).catch(() => undefined);
      this.log.warn({ task: task.id, err: message }, 'scheduled task failed');
    }
  }
}
