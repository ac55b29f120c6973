/**
 * Pre-deployment backups sent by agents (backup_store requests, each the backups of several
 * jobs) before a deploy job changes anything: the controller keeps the first backup of each job
 * (a config version of the device and the deployment device's backup_config_id) and
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
import type { DeploymentStore, JobDevice } from './store';

/**
 * Requests reach the store already gathered: the engine reads their signers together (those
 * that come while the previous read is out, REQUEST_GATHER_MS) and hands the batch on at once,
 * so the store gathers only the requests of the same turn of the event loop, and those that
 * come while its transaction is out. Agents gather their jobs' backups into one request
 * (agent/src/backup-store.ts), so a request carries several jobs.
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
   * first of each job is stored (a config version and the device's backup_config_id)
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

  /** store() for many requests, in one transaction: jobs and devices read and locked in one statement, then versions and device rows written. */
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
   * For each backup: refused, answered with the backup already kept for its device, or to be
   * stored (returned). Its job must be an open deploy job of the agent's organization at the
   * attempt the agent runs, and still its device's current job; the devices are read and locked
   * with their stored backups in one statement.
   */
  private async decide(trx: Knex.Transaction, valid: StoreEntry[], answers: BackupStoreAnswer[]) {
    const rows = await this.deployments.lockJobDevices(trx, [...new Set(valid.map((v) => v.entry.job_id))]);
    const byJob = new Map(rows.map((r) => [r.job, r]));
    const kept = new Map<string, FetchedConfig>();
    const storing: { a: StoreEntry; device: JobDevice }[] = [];
    for (const v of valid) {
      const row = byJob.get(v.entry.job_id);
      const key = row ? `${row.deployment_id}/${row.device_id}` : '';
      const refuse = (error: string) => void (answers[v.i] = storeAnswer(v.entry.job_id, null, error));
      const answer = (backup: FetchedConfig) => void (answers[v.i] = keptAnswer(v.entry, backup));
      if (!row || row.job_org_id !== v.agent.org_id) refuse('the deploy job is not open');
      // Jobs are published inside the dispatch pass's transaction: an agent can ask before it commits.
      else if (row.job_status === 'queued' && row.job_attempt === v.entry.attempt - 1)
        answers[v.i] = { ...storeAnswer(v.entry.job_id, null, 'the job is still being dispatched'), retry: true };
      else if (!['dispatched', 'running'].includes(row.job_status)) refuse('the deploy job is not open');
      else if (row.job_attempt !== v.entry.attempt) refuse(`attempt ${v.entry.attempt} is not the job's current attempt (${row.job_attempt})`);
      // Claimed for this job (its id may not be recorded yet: the agent can be quicker than that).
      else if (row.status !== 'running' || (row.job_id !== null && row.job_id !== v.entry.job_id))
        refuse("the job is no longer the device's current deploy job");
      else if (kept.has(key)) answer(kept.get(key)!);
      else if (row.backup_config_id && row.backup_text === null)
        refuse(`the pre-deployment backup (config version ${row.backup_config_id}) no longer exists`);
      else if (row.backup_config_id) {
        kept.set(key, { text: row.backup_text!, format: row.backup_format!, via: row.backup_via! });
        answer(kept.get(key)!);
      } else {
        kept.set(key, v.entry.backup);
        storing.push({ a: v, device: row });
        answer(v.entry.backup);
      }
    }
    return storing;
  }

  /** Keeps the first backup of each device (decide), storing the new ones as config versions. */
  private async storeValid(trx: Knex.Transaction, configs: ConfigService, valid: StoreEntry[], answers: BackupStoreAnswer[]): Promise<void> {
    const storing = await this.decide(trx, valid, answers);
    if (storing.length === 0) return;
    const versions = await configs.store.insertVersions(
      trx,
      storing.map(({ a, device }) => backupVersion({ orgId: a.agent.org_id, deviceId: device.device_id, jobId: a.entry.job_id }, a.entry.backup)),
    );
    if (versions.some((v, i) => v?.device_id !== storing[i].device.device_id)) throw new Error('stored backups came back in another order');
    // No log line here: the job's own lines reach the log with its result, after this; the outcome's line names the version.
    await this.deployments.recordDevices(
      trx,
      storing.map(({ device }, i) => ({ ...device, backup_config_id: versions[i].id, stamp: false })),
      [],
    );
  }
}
