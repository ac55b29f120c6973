import type { Knex } from 'knex';
import type { FastifyBaseLogger as Logger } from 'fastify';
import type { AuditService } from '../platform/audit-service';
import type { AuthContext } from '../auth/auth-service';
import type { PullMethod } from '../../../shared/src/device/backup-method';
import type { BackupJobParams } from '../../../shared/src/jobs/backup';
import { planBackup, type ConfigService } from './service';
import type { BackupDevice } from './store';
import { appError } from '../errors/app-error';
import type { JobSpec } from '../jobs/types';
import type { RunDevice, SnapshotRow, SnapshotStore } from './snapshot-store';

/** Collection deadline when collect does not give timeout_seconds. */
export const DEFAULT_TIMEOUT_SECONDS = 600;
/** Jobs are handed to the job service in slices of this many. */
const SUBMIT_BATCH = 500;

export interface DeviceFilter {
  site_id?: string;
  device_type?: string;
}

/**
 * Snapshots: a backup run over the devices matching a filter. Collect submits one backup job
 * per device (groupId = snapshot id); ConfigService.recordBackup moves the counts as outcomes
 * arrive, and the sweeper ends runs whose deadline has passed, so none stays collecting.
 */
export class SnapshotService {
  constructor(
    readonly store: SnapshotStore,
    private readonly configs: ConfigService,
    private readonly log: Logger,
    private readonly audit: AuditService,
  ) {}

  async get(orgId: string, id: string): Promise<SnapshotRow> {
    const snapshot = await this.store.get(orgId, id);
    if (!snapshot) throw appError('SNAPSHOT_NOT_FOUND');
    return snapshot;
  }

  async create(me: AuthContext, name: string, filter: DeviceFilter = {}, method: PullMethod = 'cli', deviceIds?: string[]) {
    if (filter.site_id && !(await this.store.siteExists(me.orgId, filter.site_id))) {
      throw appError('VALIDATION_FAILED', `Site ${filter.site_id} not found`);
    }
    const deviceFilter: Record<string, unknown> = {};
    if (filter.site_id) deviceFilter.site_id = filter.site_id;
    if (filter.device_type) deviceFilter.device_type = filter.device_type;
    if (deviceIds) deviceFilter.device_ids = deviceIds;
    return this.store.insert({ org_id: me.orgId, name, device_filter: deviceFilter, method, created_by: me.userId, created_by_name: me.username });
  }

  async delete(me: AuthContext, id: string): Promise<void> {
    if (!(await this.store.delete(me.orgId, id))) throw appError('SNAPSHOT_NOT_FOUND');
    await this.audit.byActor(me, 'snapshot.deleted', { snapshot_id: id });
  }

  /** POST /collect: backs up every device matching the filter. */
  async collect(me: AuthContext, id: string, timeoutSeconds = DEFAULT_TIMEOUT_SECONDS) {
    const started = await this.start(me, id, timeoutSeconds, 'full', (trx, snapshot) =>
      this.configs.store.matchDevices(me.orgId, snapshot.device_filter, trx),
    );
    if (started.devices_queued === 0) throw appError('SNAPSHOT_NO_DEVICES');
    return started;
  }

  /** POST /recollect-failed: backs up again only the devices that failed (and still exist). */
  async recollectFailed(me: AuthContext, id: string, timeoutSeconds = DEFAULT_TIMEOUT_SECONDS) {
    const started = await this.start(me, id, timeoutSeconds, 'failed_only', async (trx, snapshot) => {
      const failed = await this.store.failedDevices(trx, snapshot.id);
      return failed.length
        ? this.configs.store.findDevices(
            me.orgId,
            failed.map((f) => f.device_id),
            trx,
          )
        : [];
    });
    if (started.devices_queued === 0) throw appError('SNAPSHOT_NO_FAILED_DEVICES');
    return started;
  }

  /** POST /api/config/devices/bulk-pull: a snapshot of exactly these devices, collected at once. */
  async bulkPull(me: AuthContext, deviceIds: string[], method: PullMethod) {
    const devices = await this.configs.devices(me.orgId, deviceIds);
    const stamp = new Date().toISOString().replace('T', ' ').slice(0, 19);
    const snapshot = await this.create(
      me,
      `Bulk pull ${stamp} UTC (${devices.length} devices)`,
      {},
      method,
      devices.map((d) => d.id),
    );
    const started = await this.collect(me, snapshot.id);
    return {
      message: `Pulling ${started.devices_queued} device${started.devices_queued === 1 ? '' : 's'} in the background as snapshot ${snapshot.id}`,
      snapshot_id: snapshot.id,
      devices_queued: started.devices_queued,
    };
  }

  private async start(
    me: AuthContext,
    id: string,
    timeoutSeconds: number,
    mode: 'full' | 'failed_only',
    pick: (trx: Knex.Transaction, snapshot: SnapshotRow) => Promise<BackupDevice[]>,
  ) {
    await this.get(me.orgId, id);
    const jobs = this.configs.jobs();
    const plans = new Map<string, BackupJobParams>();
    const run = await this.store.startRun(
      me.orgId,
      id,
      timeoutSeconds,
      async (trx, snapshot) => {
        const devices = await pick(trx, snapshot);
        return devices.map((d): RunDevice => {
          const plan = planBackup(d, snapshot.method as PullMethod);
          plans.set(d.id, { methods: plan.methods, structured_transport: plan.structured_transport });
          return { device_id: d.id, device_name: d.name, methods: plan.methods, structured_transport: plan.structured_transport };
        });
      },
      mode,
    );
    if (run === 'not_found') throw appError('SNAPSHOT_NOT_FOUND');
    if (run === 'busy') throw appError('SNAPSHOT_BUSY');
    const specs: JobSpec[] = run.devices.map((d) => ({
      orgId: me.orgId,
      kind: 'backup',
      deviceId: d.device_id,
      params: plans.get(d.device_id) as BackupJobParams,
      deadlineMs: timeoutSeconds * 1000,
      groupId: id,
    }));
    for (let i = 0; i < specs.length; i += SUBMIT_BATCH) {
      const batch = specs.slice(i, i + SUBMIT_BATCH);
      try {
        const jobIds = await jobs.submit(batch);
        await this.store.setJobIds(
          id,
          batch.map((s, k) => ({ device_id: s.deviceId, job_id: jobIds[k] })),
        );
      } catch (err) {
        // Nothing was queued for the rest: they fail now with the reason, so the run still ends.
        this.log.error({ err, snapshotId: id }, 'could not submit snapshot backup jobs');
        const reason = `Could not queue the backup job: ${(err as Error).message}`;
        await this.store.failDevices(
          id,
          specs.slice(i).map((s) => s.deviceId),
          reason,
        );
        throw appError('JOBS_UNAVAILABLE', `Snapshot collection stopped: ${reason}`);
      }
    }
    return { snapshot: run.snapshot, devices_queued: specs.length };
  }

  backups(orgId: string, id: string) {
    return this.get(orgId, id).then(() => this.store.backups(orgId, id));
  }

  /** The session transcript of one backup, every secret masked (ConfigService.transcript). */
  async transcript(orgId: string, configId: string): Promise<string> {
    const transcript = await this.configs.transcript(orgId, configId);
    if (transcript === undefined) throw appError('BACKUP_NOT_FOUND');
    return transcript;
  }

  /** Ends collections past their deadline (plus grace for outcomes in flight) and closes finished ones. */
  async sweep(graceSeconds = 30): Promise<number> {
    return this.store.sweep(graceSeconds);
  }
}
