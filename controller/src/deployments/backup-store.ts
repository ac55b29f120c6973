/**
 * Pre-deployment backups sent by agents (backup_store requests, each the backups of several
 * jobs) before a deploy job changes anything: the controller keeps the first backup of each job
 * (a config version of the device, the deployment device's backup_config_id and a log line) and
 * answers every attempt of the job with it, one answer per job in one reply. Requests of the
 * moment share one transaction.
 */
import type { Knex } from 'knex';
import { Batcher } from '../../../shared/src/jobs/limit';
import {
  BackupStoreRequest,
  PROTOCOL_VERSION,
  checkMessage,
  type BackupStoreAnswer,
  type BackupStoreEntry,
  type BackupStoreReply,
} from '../../../shared/src/jobs/messages';
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
 * Since the agents gather their jobs' backups into one request (agent/src/backup-store.ts), a
 * request carries several jobs, and the engine's gather still pays (see REQUEST_GATHER_MS);
 * storing the requests it hands on together costs nothing, as nothing waits for it.
 */
const GATHER_MS = 0;
/** Requests to a transaction at the most: up to BACKUP_STORE_MAX jobs each. */
const REQUESTS_PER_TRANSACTION = 16;

/** One job's backup of a checked request, with its place among the batch's jobs. */
type StoreEntry = { i: number; agent: AgentRef; entry: BackupStoreEntry };
type FetchedConfig = NonNullable<BackupStoreAnswer['backup']>;

/** The answer for one job: the backup kept for it (or `same`: the request's own), or why not. */
const storeAnswer = (jobId: string, backup: FetchedConfig | null, error: string | null, same = false): BackupStoreAnswer => ({
  job_id: jobId,
  ok: backup !== null || same,
  backup,
  error,
  ...(same && { same }),
});

/** The reply to a request refused as a whole (malformed, another agent's): no job of it is answered. */
const refusal = (error: string): BackupStoreReply => ({ v: PROTOCOL_VERSION, type: 'backup_stored', error, answers: [] });

/** The backup kept for the entry's job; `same` instead of the backup when it is the entry's own (the agent keeps its copy). */
function keptAnswer(entry: BackupStoreEntry, kept: FetchedConfig): BackupStoreAnswer {
  const own = entry.backup;
  if (kept.text === own.text && kept.format === own.format && kept.via === own.via) {
    return storeAnswer(entry.job_id, null, null, true);
  }
  return storeAnswer(entry.job_id, kept, null);
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

type CheckedRequest = { agent: AgentRef; request: BackupStoreRequest };

export class PreDeploymentBackups {
  private readonly batches = new Batcher<CheckedRequest, BackupStoreAnswer[]>((items) => this.storeBatch(items), REQUESTS_PER_TRANSACTION, GATHER_MS);

  constructor(
    private readonly deployments: DeploymentStore,
    private readonly configs: ConfigService,
  ) {}

  /**
   * Deploy jobs' pre-deployment backups, sent by their agent before they change anything: the
   * first of each job is stored (a config version, the device's backup_config_id, a log line)
   * and every attempt is answered with the stored one, so a redelivered job (its agent died
   * mid-push) verifies against and restores to the config from before the change, never a
   * half-changed one. One answer per job, in the request's order; requests of the moment are
   * stored together (storeBatch).
   */
  async store(agent: AgentRef, payload: unknown): Promise<BackupStoreReply> {
    let request: BackupStoreRequest;
    try {
      request = checkMessage(BackupStoreRequest, payload, 'backup store request');
    } catch (err) {
      return refusal((err as Error).message);
    }
    if (request.agent_id !== agent.id) return refusal('agent_id does not match the signer');
    return { v: PROTOCOL_VERSION, type: 'backup_stored', error: null, answers: await this.batches.add({ agent, request }) };
  }

  /** store() for many requests: jobs read, devices locked (key order), versions and device rows written, one statement each. */
  private async storeBatch(items: CheckedRequest[]): Promise<BackupStoreAnswer[][]> {
    const entries: StoreEntry[] = items
      .flatMap(({ agent, request }) => request.backups.map((entry) => ({ agent, entry })))
      .map((e, i) => ({ ...e, i }));
    const answers: BackupStoreAnswer[] = [];
    const { configs } = this;
    try {
      await this.deployments.db.transaction((trx) => this.storeValid(trx, configs, entries, answers));
    } catch (err) {
      // Nothing of the batch was stored: each agent asks again.
      for (const e of entries)
        answers[e.i] = { ...storeAnswer(e.entry.job_id, null, `the backup could not be stored yet: ${(err as Error).message}`), retry: true };
    }
    let at = 0;
    return items.map(({ request }) => answers.slice(at, (at += request.backups.length)));
  }

  /**
   * The backups whose job is an open deploy job of the agent's organization, at the attempt the
   * agent runs, with the deployment device each is about; the others are answered here.
   */
  private async openJobEntries(trx: Knex.Transaction, valid: StoreEntry[], answers: BackupStoreAnswer[]) {
    const jobs: { id: string; org_id: string; group_id: string | null; device_id: string; status: string; attempt: number }[] = await trx('jobs')
      .whereRaw('id = ANY(?::uuid[])', [[...new Set(valid.map((v) => v.entry.job_id))]])
      .where({ kind: 'deploy' })
      .select('id', 'org_id', 'group_id', 'device_id', 'status', 'attempt');
    const byId = new Map(jobs.map((j) => [j.id, j]));
    const accepted: (StoreEntry & { key: string; deployment_id: string; device_id: string })[] = [];
    for (const v of valid) {
      const job = byId.get(v.entry.job_id);
      const refuse = (error: string) => void (answers[v.i] = storeAnswer(v.entry.job_id, null, error));
      if (!job || job.org_id !== v.agent.org_id || !job.group_id) refuse('the deploy job is not open');
      // Jobs are published inside the dispatch pass's transaction: an agent can ask before it commits.
      else if (job.status === 'queued' && job.attempt === v.entry.attempt - 1)
        answers[v.i] = { ...storeAnswer(v.entry.job_id, null, 'the job is still being dispatched'), retry: true };
      else if (!['dispatched', 'running'].includes(job.status)) refuse('the deploy job is not open');
      else if (job.attempt !== v.entry.attempt) refuse(`attempt ${v.entry.attempt} is not the job's current attempt (${job.attempt})`);
      else accepted.push({ ...v, key: `${job.group_id}/${job.device_id}`, deployment_id: job.group_id, device_id: job.device_id });
    }
    return accepted;
  }

  /** For the backups whose job is open (openJobEntries): keeps the first backup of each device, an existing one or this entry's (stored now). */
  private async storeValid(trx: Knex.Transaction, configs: ConfigService, valid: StoreEntry[], answers: BackupStoreAnswer[]): Promise<void> {
    const accepted = await this.openJobEntries(trx, valid, answers);
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
      const refuse = (error: string) => void (answers[a.i] = storeAnswer(a.entry.job_id, null, error));
      const answer = (backup: FetchedConfig) => void (answers[a.i] = keptAnswer(a.entry, backup));
      // Claimed for this job (its id may not be recorded yet: the agent can be quicker than that).
      if (!device || device.status !== 'running' || (device.job_id !== null && device.job_id !== a.entry.job_id))
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
        kept.set(a.key, a.entry.backup);
        storing.push({ a, device });
        answer(a.entry.backup);
      }
    }
    if (storing.length === 0) return;
    const versions = await configs.store.insertVersions(
      trx,
      storing.map(({ a }) => backupVersion({ orgId: a.agent.org_id, deviceId: a.device_id, jobId: a.entry.job_id }, a.entry.backup)),
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
