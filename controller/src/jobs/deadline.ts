/**
 * Why a job missed its deadline, in words an operator can act on: which agent held it, or that
 * no agent of its site was online, or that the device was busy with another job.
 */
import type { Knex } from 'knex';
import { DEFAULT_POOL } from '../../../shared/src/nats/subjects';
import { isOffline as offline, unguarded, type AgentDirectory, type Liveness } from './ports';
import type { FinalFields, JobRow, JobsStore } from './store';

/** A duration as "N s" (at least 1). */
export const inSeconds = (ms: number) => `${Math.max(1, Math.round(ms / 1000))} s`;

export interface DeadlineContext {
  agents: AgentDirectory;
  store: JobsStore;
  /** The job transport's name (nats or inprocess). */
  transport: string;
  live: Liveness;
  /** Agent events stored but not yet recorded when the sweep began. */
  backlog: number;
  /**
   * How long past its deadline (or this controller's start) a job is left open while events
   * wait: the ack wait after which events a crashed controller held reach another replica, with
   * room to record them.
   */
  graceMs: number;
  /** When this controller started: events a crashed one held reach it only after the ack wait. */
  upSince: number;
}

/** The final fields of a job whose deadline passed (null while it has not). */
export async function deadlineFailure(job: JobRow, trx: Knex.Transaction, ctx: DeadlineContext): Promise<FinalFields | null> {
  const now = Date.now();
  if (job.deadline_at.getTime() > now) return null;
  // The grace runs from the deadline, or from this controller's start after an outage.
  if (ctx.backlog > 0 && now - Math.max(job.deadline_at.getTime(), ctx.upSince) < ctx.graceMs) return null;
  const { agents, live } = ctx;
  const waiting =
    ctx.backlog > 0
      ? `; ${ctx.backlog} agent event(s) were still waiting to be recorded (a controller may have stopped while holding them), so its result ` +
        `may yet arrive: a late result is logged with this job's id`
      : '';
  const isOffline = (a: { last_seen_at: Date | null }) => offline(a, live, now);
  const waited = inSeconds(job.deadline_at.getTime() - job.created_at.getTime());
  const pool = job.pool ?? DEFAULT_POOL;
  const members = await agents.poolMembers(job.org_id, pool, trx);
  const online = members.filter((m) => !isOffline(m));
  const old = unguarded(members).map((a) => `"${a.name}"`);
  const siteIds = [...new Set([pool === DEFAULT_POOL ? null : pool, job.site_id].filter((s): s is string => s !== null))];
  const names = await agents.siteNames(siteIds, trx);
  const siteName = (id: string) => `"${names.get(id) ?? id}"`;
  const where =
    pool === DEFAULT_POOL
      ? `the default pool (devices without a site, or whose site has no agents${job.site_id ? `; this device's site ${siteName(job.site_id)} has none` : ''})`
      : `site ${siteName(pool)}`;
  let error: string;
  if (job.status === 'running' && job.agent_id) {
    const agent = await agents.agentName(job.agent_id, trx);
    const gone = !agent || isOffline(agent);
    error =
      `Agent "${agent?.name ?? job.agent_id}" of ${where} started the job but reported no result within its ${waited} ` +
      `deadline${gone ? '; the agent has stopped sending heartbeats' : ''}${waiting}`;
  } else if (job.status === 'queued' && (await ctx.store.deviceBusy(job.device_id, job.id, trx))) {
    error = `The job waited for another job on this device to finish and its ${waited} deadline passed`;
  } else if (job.pool === null) {
    error =
      `The job could not be handed to an agent within its ${waited} deadline: the job transport ` +
      `(${ctx.transport === 'nats' ? 'NATS' : 'in-process'}) did not accept it`;
  } else if (online.length === 0) {
    error = `No agent of ${where} is online: the job waited ${waited} for one and its deadline passed`;
  } else if (job.status === 'queued' && old.length > 0 && (await ctx.store.deviceLimitsNetworks(job.device_id, trx))) {
    error =
      `The device's connection profile limits where its credentials may go (allowed_networks), and agent(s) ${old.slice(0, 5).join(', ')} of ` +
      `${where} are too old to enforce that, so no job of the device is sent there: upgrade or revoke them. The job waited ${waited} ` +
      'and its deadline passed';
  } else {
    error = waiting
      ? `${online.length} agent(s) of ${where} are online, but neither a start nor a result of the job was recorded within its ` +
        `${waited} deadline${waiting}`
      : `${online.length} agent(s) of ${where} are online but none started the job within its ${waited} deadline; they may be overloaded or ` +
        `unable to reach NATS`;
  }
  return { status: 'failed', error, result: null, agentId: job.status === 'running' ? job.agent_id : null, startedAt: job.started_at };
}
