import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { CONTROLLER_SIGN_ALG, signJson, type ControllerKey } from '../../../shared/src/jobs/crypto';
import type { JobTransport } from '../../../shared/src/jobs/link';
import { mapLimit } from '../../../shared/src/jobs/limit';
import { DEFAULT_POOL } from '../../../shared/src/nats/subjects';
import { groupBy } from '../../../shared/src/group-by';
import { jobBatch, splitBatches } from './job-message';
import { isOffline, unguarded, type AgentDirectory, type AgentIdentityRow, type DeviceTarget, type Liveness, type TargetLoader } from './ports';
import type { Dispatched, JobRow, JobsStore } from './store';

/** Batches sealed, signed and published at once. */
const PUBLISH_CONCURRENCY = 16;
/** How long a burst of freed devices waits for one pass to serve it (kickSoon). */
const KICK_SOON_MS = 20;

export interface DispatcherDeps {
  store: JobsStore;
  agents: AgentDirectory;
  targets: TargetLoader;
  transport: JobTransport;
  controllerKey: ControllerKey;
  log: Logger;
  /** Jobs looked at per pass. */
  batchSize: number;
  liveness(): Promise<Liveness>;
  /** Ends the jobs whose device was deleted while they waited (after the pass commits). */
  deviceGone(jobs: JobRow[]): Promise<void>;
}

/** A job routed to its pool, with the pool's agents it is sealed to. */
interface Routed {
  job: JobRow;
  target: DeviceTarget;
  pool: string;
  recipients: AgentIdentityRow[];
}

/** What one pass decided for its jobs. */
interface Routes {
  toSend: Routed[];
  /** No agent in the pool: the job waits there (its pool is recorded for the health view). */
  waiting: { id: string; pool: string; site_id: string | null }[];
  gone: JobRow[];
}

/**
 * Dispatch passes: queued jobs (one per device at a time) routed to their site's pool, or the
 * default pool when no agent serves the site, and published in batches sealed and signed once.
 * One pass at a time per replica, and one across replicas (the store's advisory lock).
 */
export class Dispatcher {
  private running: Promise<void> | null = null;
  private again = false;
  private soonTimer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(private readonly deps: DispatcherDeps) {}

  start(): void {
    this.stopped = false;
  }

  /** No pass starts after this; resolves once the running one has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.soonTimer) clearTimeout(this.soonTimer);
    this.soonTimer = null;
    await this.running?.catch(() => undefined);
  }

  /** Runs a pass now, or makes the running one go round again; resolves when done. */
  kick(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.passes().finally(() => (this.running = null));
    return this.running;
  }

  /** A pass shortly: outcomes arrive in bursts, one pass serves a burst. */
  kickSoon(): void {
    if (this.soonTimer || this.stopped) return;
    this.soonTimer = setTimeout(() => {
      this.soonTimer = null;
      void this.kick();
    }, KICK_SOON_MS);
  }

  private async passes(): Promise<void> {
    do {
      this.again = false;
      try {
        if (await this.pass()) this.again = true;
      } catch (err) {
        this.deps.log.warn({ err: (err as Error).message }, 'job dispatch failed; retrying on the next sweep');
        return;
      }
    } while (this.again && !this.stopped);
  }

  /** One pass; true when the batch was full (more may be waiting). */
  private async pass(): Promise<boolean> {
    const { store, batchSize } = this.deps;
    let gone: JobRow[] = [];
    // Read before the lock: the embedded database has a single connection, held by the dispatch transaction.
    const live = await this.deps.liveness();
    const full = await store.withDispatchLock(async (trx) => {
      const rows = await store.dispatchCandidates(trx, batchSize);
      const seen = new Set<string>();
      const jobs = rows.filter((r) => !seen.has(r.device_id) && seen.add(r.device_id));
      if (jobs.length === 0) return false;
      const routes = await this.route(trx, jobs);
      gone = routes.gone;
      await store.markDispatched(trx, await this.publish(routes.toSend, live));
      await store.setPool(trx, routes.waiting);
      return rows.length === batchSize;
    });
    if (gone.length > 0) await this.deps.deviceGone(gone);
    return full;
  }

  /** Each job's target and pool: its site's when an agent serves the site, else the default pool. */
  private async route(trx: Knex.Transaction, jobs: JobRow[]): Promise<Routes> {
    const { targets: load, agents } = this.deps;
    const targets = new Map<string, DeviceTarget>();
    for (const [orgId, list] of groupBy(jobs, (j) => j.org_id)) {
      const found = await load(
        trx,
        orgId,
        list.map((j) => j.device_id),
      );
      for (const t of found) targets.set(`${orgId}/${t.device_id}`, t);
    }
    const siteIds = [...new Set([...targets.values()].flatMap((t) => (t.site_id ? [t.site_id] : [])))];
    const staffed = await agents.sitesWithAgents(siteIds, trx);
    const members = new Map<string, AgentIdentityRow[]>();
    const routes: Routes = { toSend: [], waiting: [], gone: [] };
    for (const job of jobs) {
      const target = targets.get(`${job.org_id}/${job.device_id}`);
      if (!target) {
        routes.gone.push(job);
        continue;
      }
      const pool = target.site_id && staffed.has(target.site_id) ? target.site_id : DEFAULT_POOL;
      const key = `${job.org_id}/${pool}`;
      if (!members.has(key))
        members.set(
          key,
          (await agents.poolMembers(job.org_id, pool, trx)).filter((a) => a.public_key),
        );
      // Any agent of the pool may take a batch: one that ignores allowed_networks gets none whose profile has them.
      const recipients = members.get(key)!;
      if (recipients.length === 0 || (target.allowed_networks.length > 0 && unguarded(recipients).length > 0))
        routes.waiting.push({ id: job.id, pool, site_id: target.site_id });
      else routes.toSend.push({ job, target, pool, recipients });
    }
    return routes;
  }

  /** The jobs of each pool in batches: one message, one signature and one sealing per batch. */
  private async publish(toSend: Routed[], live: Liveness): Promise<Dispatched[]> {
    const { controllerKey, transport } = this.deps;
    const online = (agents: AgentIdentityRow[]) => agents.filter((a) => !isOffline(a, live)).length;
    const batches = [...groupBy(toSend, (s) => `${s.job.org_id}/${s.pool}`).values()].flatMap((group) =>
      splitBatches(
        group.map(({ job, target }) => ({ job, target, attempt: job.attempt + 1 })),
        online(group[0].recipients),
      ).map((items) => ({ items, ...group[0] })),
    );
    const sent = await mapLimit(batches, PUBLISH_CONCURRENCY, async ({ items, job, pool, recipients }): Promise<Dispatched[]> => {
      const message = await jobBatch(job.org_id, pool, items, recipients);
      const token = await signJson(message, controllerKey.privateKey, CONTROLLER_SIGN_ALG);
      const seq = await transport.publishJob(job.org_id, pool, token, message.batch_id);
      return items.map(({ job: j, target, attempt }) => ({
        id: j.id,
        attempt,
        pool,
        site_id: target.site_id,
        stream_seq: seq,
        transport: transport.name,
      }));
    });
    return sent.flat();
  }
}
