/**
 * Pre-deployment backups sent by agents (backup_store requests, each the backups of several
 * jobs) before a deploy job changes anything: the controller keeps the first backup of each job
 * (a config version of the device and the deployment device's backup_config_id) and
 * answers every attempt of the job with it, one answer per job in one reply. Requests of the
 * moment share one statement (DeploymentStore.storeBackups), so they cost one round trip.
 */
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
import { UUID } from '../db/knex';
import { inputProblem } from '../http/input-limits';
import type { NewVersion } from '../configs/store';
import { SignerChanged, type JobOutcome, type RequestSigner } from '../jobs/types';
import type { BackupToStore, BackupVerdict, DeploymentStore } from './store';

/**
 * Requests to a statement at the most: up to BACKUP_STORE_MAX jobs each. Requests reach the store
 * already gathered (the engine reads their signers together), and it adds those of the same turn
 * of the event loop and those that come while its statement is out; agents gather their jobs'
 * backups into one request (agent/src/backup-store.ts).
 */
const REQUESTS_PER_STATEMENT = 16;

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

/** A deploy job's backup as a config version: its fields but the device's, organization's and job's. */
function backupFields(backup: FetchedConfig): BackupToStore['version'] {
  return {
    method: backup.via === 'ssh' ? 'cli' : 'structured',
    source: 'deployment',
    snapshot_id: null,
    ...successfulVersion({ text: backup.text, format: backup.format, via: backup.via }),
    transcript: '',
  };
}

/** A deploy job's backup as a config version of its device. */
export function backupVersion(job: Pick<JobOutcome, 'orgId' | 'deviceId' | 'jobId'>, backup: FetchedConfig): NewVersion {
  return { org_id: job.orgId, device_id: job.deviceId, job_id: job.jobId, ...backupFields(backup) };
}

/**
 * Why an entry could not be stored (a job id that is not a UUID, a text PostgreSQL refuses: the
 * checks every API request gets), or null. Requests of the moment share one statement: one such
 * entry would fail every agent's request gathered with it, over and over while its sender keeps sending.
 */
function unstorableEntry(entries: BackupStoreEntry[]): string | null {
  const badId = entries.findIndex((e) => !UUID.test(e.job_id));
  if (badId >= 0) return `/backups/${badId}/job_id is not a job id`;
  const problem = inputProblem(entries);
  return problem && `/backups${problem.instancePath} ${problem.message}`;
}

type CheckedRequest = { agent: RequestSigner; request: BackupStoreRequest };
/** A request whose signer the statement found revoked or with another key: nothing of it was stored. */
const SIGNER_CHANGED = Symbol('signer changed');

/**
 * Each backup's answer from its verdict: refused with the reason, asked to try again, or
 * answered with the backup kept for its device (this one when it was stored; for a later backup
 * of the same device in the request, the first one's).
 */
function answersOf(entries: BackupStoreEntry[], verdicts: BackupVerdict[]): BackupStoreAnswer[] {
  const keptOf = new Map<string, FetchedConfig | null>();
  return entries.map((entry, n) => {
    const v = verdicts[n];
    const refuse = (error: string) => storeAnswer(entry.job_id, null, error);
    if (v.verdict === 'signer_changed') return refuse('the signer was revoked or given another key');
    if (v.verdict === 'not_open') return refuse('the deploy job is not open');
    if (v.verdict === 'dispatching') return { ...refuse('the job is still being dispatched'), retry: true };
    if (v.verdict === 'stale') return refuse(`attempt ${entry.attempt} is not the job's current attempt (${v.job_attempt})`);
    if (v.verdict === 'not_current') return refuse("the job is no longer the device's current deploy job");
    const key = `${v.deployment_id}/${v.device_id}`;
    if (v.nth === 1)
      keptOf.set(
        key,
        v.stored_id ? entry.backup : v.backup_text !== null ? { text: v.backup_text, format: v.backup_format!, via: v.backup_via! } : null,
      );
    const kept = keptOf.get(key);
    return kept ? keptAnswer(entry, kept) : refuse(`the pre-deployment backup (config version ${v.backup_config_id}) no longer exists`);
  });
}

export class PreDeploymentBackups {
  private readonly batches = new Batcher<CheckedRequest, BackupStoreAnswer[] | typeof SIGNER_CHANGED>(
    (items) => this.storeBatch(items),
    REQUESTS_PER_STATEMENT,
  );

  constructor(private readonly deployments: DeploymentStore) {}

  /**
   * Deploy jobs' pre-deployment backups, sent by their agent before they change anything: the
   * first of each job is stored (a config version and the device's backup_config_id)
   * and every attempt is answered with the stored one, so a redelivered job (its agent died
   * mid-push) verifies against and restores to the config from before the change, never a
   * half-changed one. One answer per job, in the request's order; requests of the moment are
   * stored together (storeBatch). The statement checks that the signer is still the agent the
   * request was verified against; when not, nothing is stored and it throws SignerChanged.
   */
  async store(agent: RequestSigner, payload: unknown): Promise<BackupStoreReply> {
    let request: BackupStoreRequest;
    try {
      request = checkMessage(BackupStoreRequest, payload, 'backup store request');
    } catch (err) {
      return refusal((err as Error).message);
    }
    if (request.agent_id !== agent.id) return refusal('agent_id does not match the signer');
    const unstorable = unstorableEntry(request.backups);
    if (unstorable) return refusal(`malformed backup store request: ${unstorable}`);
    const answers = await this.batches.add({ agent, request });
    if (answers === SIGNER_CHANGED) throw new SignerChanged(agent.id);
    return { v: PROTOCOL_VERSION, type: 'backup_stored', error: null, answers };
  }

  /** store() for many requests, in one statement (DeploymentStore.storeBackups), answered per backup (answersOf). */
  private async storeBatch(items: CheckedRequest[]): Promise<(BackupStoreAnswer[] | typeof SIGNER_CHANGED)[]> {
    const entries = items.flatMap(({ agent, request }) => request.backups.map((entry) => ({ agent, entry })));
    let answers: BackupStoreAnswer[];
    let verdicts: BackupVerdict[] = [];
    try {
      verdicts = await this.deployments.storeBackups(
        entries.map(({ agent, entry }) => ({
          job_id: entry.job_id,
          attempt: entry.attempt,
          org_id: agent.org_id,
          agent_id: agent.id,
          agent_key: agent.public_key,
          version: backupFields(entry.backup),
        })),
      );
      answers = answersOf(
        entries.map((e) => e.entry),
        verdicts,
      );
    } catch (err) {
      // Nothing of the batch was stored: each agent asks again.
      const error = `the backup could not be stored yet: ${(err as Error).message}`;
      answers = entries.map(({ entry }) => ({ ...storeAnswer(entry.job_id, null, error), retry: true }));
    }
    let at = 0;
    return items.map(({ request }) => {
      const from = at;
      at += request.backups.length;
      return verdicts[from]?.verdict === 'signer_changed' ? SIGNER_CHANGED : answers.slice(from, at);
    });
  }
}
