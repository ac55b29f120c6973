/**
 * A deploy job has the controller store its pre-deployment backup before it changes anything
 * (JobContext.storeBackup). The backups of the moment travel together, as one backup_store
 * request signed once, and the controller answers every job in one reply signed once. A backup
 * goes at once while no request is out; while one is, the next ones gather until it is answered
 * (up to BACKUP_GATHER_MS, BACKUP_STORE_MAX of them or BACKUP_STORE_MAX_BYTES): the deploy path
 * is bound by this round trip's latency, so the gathering must not add to it. Each job keeps
 * its own fate: its own answer, its own retries with backoff, its own deadline (a job whose time
 * is up stops waiting, whatever its request's other jobs do).
 */
import type { AgentLink } from '../../shared/src/jobs/link';
import { Gatherer } from '../../shared/src/jobs/limit';
import {
  BACKUP_STORE_MAX,
  BACKUP_STORE_MAX_BYTES,
  BackupStoreReply,
  PROTOCOL_VERSION,
  checkMessage,
  type BackupStoreAnswer,
  type BackupStoreEntry,
  type BackupStoreRequest,
} from '../../shared/src/jobs/messages';
import type { FetchedConfig } from './drivers/types';

/** How long a backup waits for the request in flight to be answered before it goes all the same. */
export const BACKUP_GATHER_MS = 10;
/** How long a request waits for a controller's reply at the most (each job gives up at its own time). */
const REQUEST_TIMEOUT_MS = 10_000;
/** JSON around a backup's text in a request, roughly: only the byte cap uses it. */
const ENTRY_OVERHEAD = 200;

export interface BackupStoreDeps {
  agentId: string;
  link: Pick<AgentLink, 'request'>;
  /** Signs a request as the agent. */
  sign(request: BackupStoreRequest): Promise<string>;
  /** Checks the controller's signature on a reply; answers its payload. */
  verify(token: string): Promise<unknown>;
}

/** A backup waiting for its request, with the time its job stops waiting. */
type Waiting = BackupStoreEntry & { until: number };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class BackupStore {
  private readonly gather: Gatherer<Waiting, BackupStoreAnswer | null>;

  constructor(
    private readonly deps: BackupStoreDeps,
    limits = { max: BACKUP_STORE_MAX, maxBytes: BACKUP_STORE_MAX_BYTES, flushMs: BACKUP_GATHER_MS, eager: true },
  ) {
    this.gather = new Gatherer(
      (entries) => this.send(entries),
      limits,
      (e) => e.backup.text.length + ENTRY_OVERHEAD,
    );
  }

  /**
   * Has the controller store the job's backup; resolves to the backup kept for the job (this
   * one, or the first attempt's). Asks again while no controller answers or it says not yet,
   * until `until` (the job's time for it); throws when refused or out of time.
   */
  async store(job: { job_id: string; attempt: number }, backup: FetchedConfig, until: number): Promise<FetchedConfig> {
    for (let delay = 100; ; delay = Math.min(delay * 2, 5_000)) {
      const answer = await this.ask({ job_id: job.job_id, attempt: job.attempt, backup, until });
      if (answer?.ok && answer.same) return backup;
      if (answer?.ok && answer.backup) return answer.backup;
      if (answer && !answer.retry) throw new Error(`the controller did not store it: ${answer.error ?? 'no reason given'}`);
      if (Date.now() + delay > until) throw new Error('no controller stored it in time; nothing was changed');
      await sleep(delay);
    }
  }

  /** The job's answer in the reply to the next request; null when none came before the job's time was up. */
  private async ask(entry: Waiting): Promise<BackupStoreAnswer | null> {
    let timer: NodeJS.Timeout | undefined;
    const timeUp = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), Math.max(0, entry.until - Date.now()))));
    try {
      return await Promise.race([this.gather.add(entry), timeUp]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** One request for the backups of the moment: one answer each, or null each when no controller answered. */
  private async send(entries: Waiting[]): Promise<(BackupStoreAnswer | null)[]> {
    const request: BackupStoreRequest = {
      v: PROTOCOL_VERSION,
      type: 'backup_store',
      agent_id: this.deps.agentId,
      at: new Date().toISOString(),
      backups: entries.map(({ job_id, attempt, backup }) => ({ job_id, attempt, backup })),
    };
    // Waited for as long as the latest of its jobs may wait (the others stop waiting at their own time).
    const timeout = Math.min(REQUEST_TIMEOUT_MS, Math.max(100, ...entries.map((e) => e.until - Date.now())));
    const token = await this.deps.link.request(await this.deps.sign(request), timeout);
    if (!token) return entries.map(() => null);
    const reply = (await this.deps.verify(token)) as { type?: unknown; error?: string | null };
    // A refused agent gets a heartbeat reply saying why.
    if (reply.type !== 'backup_stored') throw new Error(`the controller refused it: ${reply.error ?? 'no reason given'}`);
    const stored = checkMessage(BackupStoreReply, reply, 'backup store reply');
    if (stored.error !== null) throw new Error(`the controller did not store it: ${stored.error}`);
    if (stored.answers.length !== entries.length || stored.answers.some((a, i) => a.job_id !== entries[i].job_id))
      throw new Error('the controller answered for other jobs');
    return stored.answers;
  }
}
