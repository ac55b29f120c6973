/**
 * Pre-deployment backups sent by agents (backup_store requests) before a deploy job changes
 * anything: the controller keeps the first backup of each job (a config version of the device,
 * the deployment device's backup_config_id and a log line) and answers every attempt of the job
 * with it. Requests of the moment share one transaction.
 */
import type { Knex } from 'knex';
import { Batcher } from '../../../shared/src/jobs/limit';
import { BackupStoreRequest, PROTOCOL_VERSION, checkMessage, type BackupStoreReply } from '../../../shared/src/jobs/messages';
import { successfulVersion } from '../configs/backup-job';
import type { ConfigService } from '../configs/service';
import type { NewVersion } from '../configs/store';
import type { AgentRef, JobOutcome } from '../jobs/types';
import type { DeploymentStore, LockedDevice } from './store';

/**
 * Requests reach the store already gathered: the engine reads their signers together for
 * REQUEST_GATHER_MS (15 ms, nothing next to a device session) and hands the batch on at once, so
 * the store gathers only the requests of the same turn of the event loop. (A gather of its own,
 * 15 ms, used to do that work: in two paired deploy bench runs a quarter fewer statements.)
 */
const GATHER_MS = 0;

/** A well-formed backup store request, with its place in the batch. */
type StoreRequest = { i: number; agent: AgentRef; request: BackupStoreRequest };
type FetchedConfig = NonNullable<BackupStoreReply['backup']>;

/** The answer to a backup store request: the backup kept for the job (or `same`: the request's own), or why not. */
const storeReply = (jobId: string, backup: FetchedConfig | null, error: string | null, same = false): BackupStoreReply => ({
  v: PROTOCOL_VERSION,
  type: 'backup_stored',
  job_id: jobId,
  ok: backup !== null || same,
  backup,
  error,
  ...(same && { same }),
});

/** The backup kept for the request's job; `same` instead of the backup when it is the request's own (the agent keeps its copy). */
function keptReply(request: BackupStoreRequest, kept: FetchedConfig): BackupStoreReply {
  const own = request.backup;
  if (kept.text === own.text && kept.format === own.format && kept.via === own.via) {
    return storeReply(request.job_id, null, null, true);
  }
  return storeReply(request.job_id, kept, null);
}

/** A deploy job's backup as a config version of its device. */
export function backupVersion(job: Pick<JobOutcome, 'orgId' | 'deviceId' | 'jobId'>, backup: FetchedConfig): NewVersion {
  return {
    org_id: job.orgId,
    device_id: job.deviceId,
    method: backup.via === 'ssh' ? 'cli' : 'structured',
    source: 'deployment',
    snapshot_id: null,
    job_id: job.jobId,
    ...successfulVersion({ text: backup.text, format: backup.format, via: backup.via }),
    transcript: '',
  };
}

export class PreDeploymentBackups {
  private readonly batches = new Batcher<{ agent: AgentRef; payload: unknown }, BackupStoreReply>((items) => this.storeBatch(items), 256, GATHER_MS);

  constructor(
    private readonly deployments: DeploymentStore,
    private readonly configs: ConfigService,
  ) {}

  /**
   * A deploy job's pre-deployment backup, sent by its agent before it changes anything: the
   * first of the job is stored (a config version, the device's backup_config_id, a log line) and
   * every attempt is answered with the stored one, so a redelivered job (its agent died mid-push)
   * verifies against and restores to the config from before the change, never a half-changed one.
   * Requests of the moment are stored together (storeBatch).
   */
  store(agent: AgentRef, payload: unknown): Promise<BackupStoreReply> {
    return this.batches.add({ agent, payload });
  }

  /** store() for many requests: jobs read, devices locked (key order), versions and device rows written, one statement each. */
  private async storeBatch(items: { agent: AgentRef; payload: unknown }[]): Promise<BackupStoreReply[]> {
    const replies: BackupStoreReply[] = [];
    const valid: StoreRequest[] = [];
    items.forEach(({ agent, payload }, i) => {
      const jobId = typeof (payload as { job_id?: unknown })?.job_id === 'string' ? (payload as { job_id: string }).job_id : '';
      try {
        const request = checkMessage(BackupStoreRequest, payload, 'backup store request');
        if (request.agent_id !== agent.id) replies[i] = storeReply(jobId, null, 'agent_id does not match the signer');
        else valid.push({ i, agent, request });
      } catch (err) {
        replies[i] = storeReply(jobId, null, (err as Error).message);
      }
    });
    const { configs } = this;
    if (valid.length === 0) return replies;
    try {
      await this.deployments.db.transaction((trx) => this.storeValid(trx, configs, valid, replies));
    } catch (err) {
      // Nothing of the batch was stored: each agent asks again.
      for (const v of valid)
        replies[v.i] = { ...storeReply(v.request.job_id, null, `the backup could not be stored yet: ${(err as Error).message}`), retry: true };
    }
    return replies;
  }

  /**
   * The requests whose job is an open deploy job of the agent's organization, at the attempt the
   * agent runs, with the deployment device each is about; the others are answered here.
   */
  private async openJobRequests(trx: Knex.Transaction, valid: StoreRequest[], replies: BackupStoreReply[]) {
    const jobs: { id: string; org_id: string; group_id: string | null; device_id: string; status: string; attempt: number }[] = await trx('jobs')
      .whereRaw('id = ANY(?::uuid[])', [[...new Set(valid.map((v) => v.request.job_id))]])
      .where({ kind: 'deploy' })
      .select('id', 'org_id', 'group_id', 'device_id', 'status', 'attempt');
    const byId = new Map(jobs.map((j) => [j.id, j]));
    const accepted: (StoreRequest & { key: string; deployment_id: string; device_id: string })[] = [];
    for (const v of valid) {
      const job = byId.get(v.request.job_id);
      const refuse = (error: string) => void (replies[v.i] = storeReply(v.request.job_id, null, error));
      if (!job || job.org_id !== v.agent.org_id || !job.group_id) refuse('the deploy job is not open');
      // Jobs are published inside the dispatch pass's transaction: an agent can ask before it commits.
      else if (job.status === 'queued' && job.attempt === v.request.attempt - 1)
        replies[v.i] = { ...storeReply(v.request.job_id, null, 'the job is still being dispatched'), retry: true };
      else if (!['dispatched', 'running'].includes(job.status)) refuse('the deploy job is not open');
      else if (job.attempt !== v.request.attempt) refuse(`attempt ${v.request.attempt} is not the job's current attempt (${job.attempt})`);
      else accepted.push({ ...v, key: `${job.group_id}/${job.device_id}`, deployment_id: job.group_id, device_id: job.device_id });
    }
    return accepted;
  }

  /** For the requests whose job is open (openJobRequests): keeps the first backup of each device, an existing one or this request's (stored now). */
  private async storeValid(trx: Knex.Transaction, configs: ConfigService, valid: StoreRequest[], replies: BackupStoreReply[]): Promise<void> {
    const accepted = await this.openJobRequests(trx, valid, replies);
    if (accepted.length === 0) return;
    const keys = [...new Map(accepted.map((a) => [a.key, { deployment_id: a.deployment_id, device_id: a.device_id }])).values()];
    const devices = new Map((await this.deployments.lockDevices(trx, keys)).map((d) => [`${d.deployment_id}/${d.device_id}`, d]));
    const existing = await this.deployments.backupConfigs(
      trx,
      [...devices.values()].flatMap((d) => (d.backup_config_id ? [d.backup_config_id] : [])),
    );
    const kept = new Map<string, FetchedConfig>();
    const storing: { a: (typeof accepted)[number]; device: LockedDevice }[] = [];
    for (const a of accepted) {
      const device = devices.get(a.key);
      const refuse = (error: string) => void (replies[a.i] = storeReply(a.request.job_id, null, error));
      const answer = (backup: FetchedConfig) => void (replies[a.i] = keptReply(a.request, backup));
      // Claimed for this job (its id may not be recorded yet: the agent can be quicker than that).
      if (!device || device.status !== 'running' || (device.job_id !== null && device.job_id !== a.request.job_id))
        refuse("the job is no longer the device's current deploy job");
      else if (kept.has(a.key)) answer(kept.get(a.key)!);
      else if (device.backup_config_id) {
        const stored = existing.get(device.backup_config_id);
        if (!stored) refuse(`the pre-deployment backup (config version ${device.backup_config_id}) no longer exists`);
        else {
          kept.set(a.key, {
            text: stored.config_text,
            format: stored.config_format as FetchedConfig['format'],
            via: stored.pulled_via as FetchedConfig['via'],
          });
          answer(kept.get(a.key)!);
        }
      } else {
        kept.set(a.key, a.request.backup);
        storing.push({ a, device });
        answer(a.request.backup);
      }
    }
    if (storing.length === 0) return;
    const versions = await configs.store.insertVersions(
      trx,
      storing.map(({ a }) => backupVersion({ orgId: a.agent.org_id, deviceId: a.device_id, jobId: a.request.job_id }, a.request.backup)),
    );
    if (versions.some((v, i) => v?.device_id !== storing[i].device.device_id)) throw new Error('stored backups came back in another order');
    await this.deployments.recordDevices(
      trx,
      storing.map(({ device }, i) => ({ ...device, backup_config_id: versions[i].id, stamp: false })),
      storing.map(({ device }, i) => ({
        deployment_id: device.deployment_id,
        org_id: device.org_id,
        device_id: device.device_id,
        job_id: null,
        lines: [
          {
            level: 'info',
            message: `${device.device_name}: pre-deployment backup stored as config version ${versions[i].version}`,
            device_id: device.device_id,
          },
        ],
      })),
    );
  }
}
