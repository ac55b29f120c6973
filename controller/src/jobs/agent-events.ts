import type { Logger } from 'pino';
import { unverifiedPayload } from '../../../shared/src/jobs/crypto';
import type { IncomingEvent } from '../../../shared/src/jobs/link';
import { mapLimit } from '../../../shared/src/jobs/limit';
import { resultMisfit } from '../../../shared/src/jobs/kinds';
import { AgentEvent, checkMessage, type JobResult, type LogLine, type ProgressEvent } from '../../../shared/src/jobs/messages';
import { poolOf } from '../../../shared/src/nats/subjects';
import { UUID } from '../db/knex';
import type { AgentSigners } from './agent-signers';
import { OUTCOMES_PER_TRANSACTION, type OutcomeRecorder } from './outcomes';
import type { AgentIdentityRow } from './ports';
import type { EventJob, FinalFields, JobsStore, LogRow } from './store';
import type { JobKind } from './types';

const FINAL_STATUSES: ReadonlySet<string> = new Set(['succeeded', 'failed']);
/**
 * An event that came before its jobs' dispatch committed is read again this much later, then
 * later each time up to EARLY_EVENT_MAX_DELAY_MS, until the dispatch commits or the job's
 * deadline passes: a pass that takes long to commit, or rolls back after publishing (its jobs are
 * sent again by a later pass), must not lose a result whose device work is done.
 */
const EARLY_EVENT_DELAY_MS = 200;
const EARLY_EVENT_MAX_DELAY_MS = 5_000;
const earlyDelay = (incoming: IncomingEvent) => Math.min(EARLY_EVENT_DELAY_MS * (incoming.redeliveries + 1), EARLY_EVENT_MAX_DELAY_MS);
const EARLY_EVENT = "an agent event came before its jobs' dispatch committed; reading it again shortly";
/** An event whose recording failed is delivered again this much later. */
const RETRY_MS = 1000;

export interface AgentEventDeps {
  store: JobsStore;
  signers: AgentSigners;
  outcomes: OutcomeRecorder;
  log: Logger;
  /** Result transactions recorded at once. */
  resultConcurrency: number;
  /** Asks for a dispatch pass (jobs went back in the queue). */
  kick(): void;
}

interface VerifiedEvent {
  incoming: IncomingEvent;
  event: AgentEvent;
  agent: AgentIdentityRow;
}

/** One job's result out of a verified results event, with what settles that event. */
interface ResultItem {
  result: JobResult;
  agent: AgentIdentityRow;
  job: EventJob;
  /** Its event is read again for results held back: a late result is noted and its lines kept on the copy without them, once. */
  deferLate: boolean;
  settle(recorded: boolean): void;
}

interface JobRef {
  job_id: string;
  attempt: number;
}

/** A gather of verified events, sorted by what recording them takes. */
interface Sorted {
  logs: LogRow[];
  started: { id: string; attempt: number; agent_id: string; at: Date }[];
  results: ResultItem[];
  /** Events recorded once the progress is (results settle their own). */
  done: IncomingEvent[];
  rejected: JobRef[];
}

/**
 * Whether an agent's event about a job at an attempt is recorded ('ok'), read again shortly
 * ('held') or dropped ('refused'). Only an agent of the job's organization and of the pool it was
 * dispatched to may speak for it. A job still queued at the attempt before the one the event
 * names has a dispatch pass that has not committed yet (batches are published inside its
 * transaction and a quick agent can answer first; the backup_store statement's 'dispatching'
 * verdict in deployments/store.ts is the same case): its pool is not known yet, so the event
 * waits for the commit instead of being trusted or dropped.
 */
function verdict(job: EventJob | undefined, attempt: number, v: VerifiedEvent, log: Logger): 'ok' | 'held' | 'refused' {
  if (!job || job.org_id !== v.agent.org_id) return 'refused';
  if (job.status === 'queued' && job.attempt === attempt - 1 && new Date(job.deadline_at).getTime() > Date.now()) return 'held';
  if (job.pool === poolOf(v.agent.site_id)) return 'ok';
  log.warn({ agent: v.agent.id, job: job.id, pool: job.pool }, "refused an event from an agent outside the job's pool");
  return 'refused';
}

/**
 * Why a start notice or log lines the verdict let through are not about the job as it is now
 * (null: they are). They are taken only for a job sent out and not final, at its current attempt,
 * and lines only from the agent running it: lines added to a finished job, an earlier attempt or
 * another agent's run rewrote the history operators read. A start from another agent of the pool
 * is taken (JetStream hands a batch whose agent died to another at the same attempt), and its
 * lines with it: `starting` holds the starts taken so far in this gather, as job/attempt/agent.
 */
function notCurrent(job: EventJob, ref: JobRef, agentId: string, part: 'started' | 'lines', starting: Set<string>): string | null {
  if (job.status !== 'dispatched' && job.status !== 'running') return `the job is ${job.status}`;
  if (job.attempt !== ref.attempt) return `the job is at attempt ${job.attempt}`;
  if (part === 'started' || job.agent_id === null || job.agent_id === agentId) return null;
  return starting.has(`${ref.job_id}/${ref.attempt}/${agentId}`) ? null : 'another agent runs the job';
}

/**
 * What agents send back, recorded: progress (started, log lines), rejections (the batch was
 * sealed before the agent joined its pool) and results. Only events whose signature, shape and
 * signer check out are recorded, and only about jobs of the signer's own organization and pool.
 * An event is acked once all of it is recorded, so a redelivered copy records only what is missing.
 */
export class AgentEventRecorder {
  /** Start notices and jobs' log lines refused because their job was not open at that attempt for that agent (see notCurrent). */
  progressRefused = 0;

  constructor(private readonly deps: AgentEventDeps) {}

  async record(batch: IncomingEvent[]): Promise<void> {
    const verified = await this.verified(batch);
    const sorted = await this.sort(verified);
    await this.requeueAll(sorted.rejected);
    try {
      await this.deps.store.insertLogs(sorted.logs);
      // A job whose result came in the same gather is written once, final, with its start time.
      const finishing = new Set(sorted.results.map((r) => r.result.job_id));
      await this.deps.store.markStarted(sorted.started.filter((s) => !finishing.has(s.id)));
    } catch (err) {
      this.deps.log.error({ err }, 'recording agent progress failed');
      for (const v of verified) v.incoming.nak(RETRY_MS);
      return;
    }
    sorted.done.forEach((e) => e.ack());
    await this.recordResults(sorted.results);
  }

  /**
   * The events whose signature, shape and signer check out; the others are acked and dropped
   * (never recorded), and a revoked agent's jobs go back to the pool's other agents.
   */
  private async verified(batch: IncomingEvent[]): Promise<VerifiedEvent[]> {
    const { signers, log } = this.deps;
    const agents = await signers.ofTokens(batch.map((e) => e.token));
    const checked = await Promise.all(batch.map((incoming) => signers.verify(incoming.token, agents, 'detached')));
    const verified: VerifiedEvent[] = [];
    const revokedJobs: (JobRef & { org_id: string })[] = [];
    for (const [i, incoming] of batch.entries()) {
      const v = checked[i];
      if ('payload' in v) {
        try {
          const event = checkMessage(AgentEvent, v.payload, 'agent event');
          if (event.agent_id !== v.agent.id) throw new Error('agent_id does not match the signer');
          storable(event);
          verified.push({ incoming, event, agent: v.agent });
          continue;
        } catch (err) {
          log.warn({ err: (err as Error).message, agent: v.agent.id }, 'refused an agent event');
        }
      } else {
        log.warn({ reason: v.refused }, 'refused an agent event');
        // Signed by a revoked agent (verify checked its key): its jobs of its organization go back.
        if (v.agent?.revoked_at) revokedJobs.push(...jobsOfToken(incoming.token).map((j) => ({ ...j, org_id: v.agent!.org_id })));
      }
      incoming.ack();
    }
    await this.requeueAll(revokedJobs);
    return verified;
  }

  /** Every job the events are about, read at once, and each event's part sorted by what recording it takes. */
  private async sort(verified: VerifiedEvent[]): Promise<Sorted> {
    const { store, log } = this.deps;
    const ids = verified.flatMap(({ event: e }) =>
      e.type === 'results' ? e.results.map((r) => r.job_id) : e.type === 'rejected' ? e.jobs.map((j) => j.job_id) : jobIdsOf(e),
    );
    const jobs = await store.jobsById([...new Set(ids.filter((id) => UUID.test(id)))]);
    const verdictOf = (v: VerifiedEvent, ref: JobRef) => verdict(jobs.get(ref.job_id), ref.attempt, v, log);
    const sorted: Sorted = { logs: [], started: [], results: [], done: [], rejected: [] };
    const starting = new Set<string>();
    for (const v of verified) {
      const e = v.event;
      if (e.type === 'results') {
        const verdicts = e.results.map((r) => verdictOf(v, r));
        const accepted = e.results.filter((_, i) => verdicts[i] === 'ok');
        // The event is acked once every result in it is recorded (or was already): a redelivered
        // copy records only what is missing, results held back among them.
        const held = verdicts.includes('held');
        if (held) log.info({ agent: v.agent.id, type: e.type }, EARLY_EVENT);
        const settle = settleOnce(v.incoming, accepted.length, held);
        // A result's log lines are recorded with it (once, in its transaction), not on their own.
        for (const r of accepted) sorted.results.push({ result: r, agent: v.agent, job: jobs.get(r.job_id)!, deferLate: held, settle });
        continue;
      }
      const refs: JobRef[] = e.type === 'rejected' ? e.jobs : [...e.started, ...e.logs];
      const verdicts = new Map(refs.map((r) => [`${r.job_id}/${r.attempt}`, verdictOf(v, r)]));
      if ([...verdicts.values()].includes('held')) {
        // Read again once the pass has committed; nothing of the event is recorded before, so its
        // copy records nothing twice.
        log.info({ agent: v.agent.id, type: e.type }, EARLY_EVENT);
        v.incoming.nak(earlyDelay(v.incoming));
        continue;
      }
      const ours = <T extends JobRef>(list: T[]) => list.filter((r) => verdicts.get(`${r.job_id}/${r.attempt}`) === 'ok');
      if (e.type === 'rejected') {
        // The batch's secrets were sealed before this agent joined the pool: seal them again.
        sorted.rejected.push(...ours(e.jobs).filter((j) => jobs.get(j.job_id)!.attempt === j.attempt));
      } else {
        const current = <T extends JobRef>(list: T[], part: 'started' | 'lines') =>
          ours(list).filter((r) => {
            const why = notCurrent(jobs.get(r.job_id)!, r, v.agent.id, part, starting);
            if (why) this.refuseProgress(v.agent.id, r, part, why);
            return !why;
          });
        for (const s of current(e.started, 'started')) {
          starting.add(`${s.job_id}/${s.attempt}/${v.agent.id}`);
          sorted.started.push({ id: s.job_id, attempt: s.attempt, agent_id: v.agent.id, at: new Date(s.at) });
        }
        for (const j of current(e.logs, 'lines'))
          for (const line of j.lines) sorted.logs.push({ job_id: j.job_id, attempt: j.attempt, agent_id: v.agent.id, line });
      }
      sorted.done.push(v.incoming);
    }
    return sorted;
  }

  /** Drops a start notice or a job's log lines of an event, counted and logged. */
  private refuseProgress(agentId: string, ref: JobRef, part: 'started' | 'lines', why: string): void {
    this.progressRefused += 1;
    this.deps.log.warn({ agent: agentId, job: ref.job_id, attempt: ref.attempt, part }, `refused an agent's progress: ${why}`);
  }

  /** Outcomes in chunks, one transaction each, a few transactions at once. */
  private async recordResults(results: ResultItem[]): Promise<void> {
    const { store, log, outcomes } = this.deps;
    const chunks: ResultItem[][] = [];
    for (let i = 0; i < results.length; i += OUTCOMES_PER_TRANSACTION) chunks.push(results.slice(i, i + OUTCOMES_PER_TRANSACTION));
    await mapLimit(chunks, this.deps.resultConcurrency, async (chunk) => {
      const outcome = await outcomes.recordResults(
        chunk.map(({ result, agent, job }) => ({
          jobId: result.job_id,
          kind: job.kind,
          fields: resultFields(result, agent.id, job.kind),
          logs: logRows(result, agent.id),
        })),
      );
      // A result not recorded keeps its log lines unless it is a copy of the one recorded (whose lines are in).
      const late = new Set(chunk.filter((item, i) => outcome[i] === 'skipped' && !item.deferLate && !this.noteUnrecorded(item)));
      const kept = await store.insertLogs([...late].flatMap((item) => logRows(item.result, item.agent.id))).then(
        () => true,
        (err: unknown) => (log.error({ err }, "recording a late result's log lines failed"), false),
      );
      // Acked once recorded, or already recorded; a late result once its lines are kept.
      chunk.forEach((item, i) => item.settle(late.has(item) ? kept : outcome[i] !== 'retry'));
    });
  }

  /** Puts jobs an agent could not (or may not) finish back in the queue, at the attempt it had (of its organization when given). */
  private async requeueAll(jobs: (JobRef & { org_id?: string })[]): Promise<void> {
    let any = false;
    for (const r of jobs) if (await this.deps.store.requeue(r.job_id, r.attempt, r.org_id)) any = true;
    if (any) this.deps.kick();
  }

  /**
   * A result that was not recorded because its job was already final: a redelivered copy of the
   * result that finished it is expected after a crash, anything else arrived too late (its job
   * was failed at its deadline, or another attempt finished it) and is logged, never dropped silently.
   */
  private noteUnrecorded({ job, result: e, agent }: ResultItem): boolean {
    if (!FINAL_STATUSES.has(job.status)) return false;
    const fields = resultFields(e, agent.id, job.kind);
    const copy = job.status === fields.status && job.agent_id === agent.id && job.error === fields.error;
    const about = {
      job: job.id,
      device: job.device_id,
      kind: job.kind,
      agent: agent.id,
      attempt: e.attempt,
      job_status: job.status,
      job_error: job.error,
      result_status: e.status,
    };
    if (copy) this.deps.log.debug(about, 'a result already recorded was delivered again');
    else this.deps.log.warn(about, 'a result arrived after its job was finalised; it was not recorded');
    return copy;
  }
}

/**
 * What a log line's text never stores: C0 and C1 control characters but tab and line feed (a
 * carriage return or an escape sequence would let an agent rewrite what an operator reads in a
 * terminal, and PostgreSQL text holds no NUL), and unpaired surrogates. Each becomes U+FFFD.
 */
const UNSAFE_TEXT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]|\p{Cs}/u;
const UNSAFE_TEXT_ALL = new RegExp(UNSAFE_TEXT.source, 'gu');

/** A time an agent sent, as the ISO text PostgreSQL takes (a day that does not exist, or year 20000, is refused there). */
function agentTime(text: string, what: string): string {
  const time = new Date(text);
  const year = time.getUTCFullYear(); // NaN for a text that is no time
  if (!(year >= 1000 && year <= 9999)) throw new Error(`malformed agent event: ${what} is not a time (${JSON.stringify(text.slice(0, 40))})`);
  return time.toISOString();
}

function storableLines(lines: LogLine[]): void {
  for (const line of lines) {
    line.at = agentTime(line.at, "a log line's at");
    if (UNSAFE_TEXT.test(line.text)) line.text = line.text.replace(UNSAFE_TEXT_ALL, '\ufffd');
  }
}

/**
 * Makes a checked event's times and log lines storable, in place, or throws (the event is
 * refused): one event PostgreSQL refuses would otherwise fail the statement of every event
 * gathered with it, other agents' and organizations' included, at each of its redeliveries.
 */
function storable(event: AgentEvent): void {
  if (event.type === 'progress') {
    for (const s of event.started) s.at = agentTime(s.at, "a job's start");
    for (const j of event.logs) storableLines(j.lines);
  } else if (event.type === 'results') {
    for (const r of event.results) {
      r.started_at = agentTime(r.started_at, "a result's started_at");
      r.finished_at = agentTime(r.finished_at, "a result's finished_at");
      storableLines(r.logs);
    }
  }
}

/** The jobs a progress event is about. */
const jobIdsOf = (e: ProgressEvent) => [...e.started.map((j) => j.job_id), ...e.logs.map((j) => j.job_id)];

/** The jobs a revoked agent's results or rejected event was about (its signature checked, its shape not: to requeue them). */
function jobsOfToken(token: string): JobRef[] {
  try {
    const payload = unverifiedPayload(token) as { type?: unknown; results?: unknown; jobs?: unknown };
    const list = payload.type === 'results' ? payload.results : payload.type === 'rejected' ? payload.jobs : null;
    if (!Array.isArray(list)) return [];
    return list.flatMap((j: { job_id?: unknown; attempt?: unknown }) =>
      typeof j?.job_id === 'string' && UUID.test(j.job_id) && typeof j.attempt === 'number' ? [{ job_id: j.job_id, attempt: j.attempt }] : [],
    );
  } catch {
    return []; // unreadable: nothing to requeue
  }
}

/**
 * Answers once all `n` parts of an event are settled: ack when each was recorded; nak when any
 * must be tried again, or shortly when parts of it were `held` back (see verdict).
 */
function settleOnce(incoming: IncomingEvent, n: number, held: boolean): (recorded: boolean) => void {
  let left = n;
  let retry = false;
  const answer = () => (retry ? incoming.nak(RETRY_MS) : held ? incoming.nak(earlyDelay(incoming)) : incoming.ack());
  if (n === 0) answer();
  return (recorded) => {
    if (!recorded) retry = true;
    if (--left === 0) answer();
  };
}

/**
 * The final fields an agent's result event asks for. A result that does not fit its kind's
 * contract (an agent of another build) fails the job with the reason instead of reaching the
 * kind's recorder, which can then take every result as its schema says.
 */
function resultFields(e: JobResult, agentId: string, kind: JobKind): FinalFields {
  const misfit = e.result === null ? null : resultMisfit(kind, e.result);
  return {
    status: misfit ? 'failed' : e.status,
    error: misfit
      ? `The agent's ${kind} result does not fit the job contract (${misfit})${e.status === 'failed' && e.error ? `; it reported: ${e.error}` : ''}`
      : e.status === 'failed'
        ? (e.error ?? 'The agent reported a failure without a reason')
        : null,
    result: misfit ? null : e.result,
    agentId,
    startedAt: new Date(e.started_at),
    attempt: e.attempt,
    ...(e.host_key ? { hostKey: e.host_key } : {}),
    ...(e.gnmi_cert ? { gnmiCert: e.gnmi_cert } : {}),
  };
}

function logRows(r: JobResult, agentId: string): LogRow[] {
  return r.logs.map((line) => ({ job_id: r.job_id, attempt: r.attempt, agent_id: agentId, line }));
}
