/**
 * Discovery rules: queueing polls (one open poll per device), recording each poll's outcome
 * (the records replace the device's previous ones section by section, in the transaction
 * that ends the job) and the reads.
 */
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { collected, SECTION_RECORDS, type DiscoveryRecords, type SectionResult } from '../../../shared/src/discovery/records';
import type { AuthContext } from '../auth/auth-service';
import type { SettingsService } from '../platform/settings-service';
import { appError } from '../errors/app-error';
import type { JobOutcome, JobService } from '../jobs/types';
import { Batcher } from '../../../shared/src/jobs/limit';
import {
  type DiscoveryStore,
  type PollFinal,
  type PollFinalOf,
  type PollRequest,
  type PollRow,
  type PollTrigger,
  type RequestedPoll,
  type RecordKind,
  type SectionRecords,
  type SectionReplacement,
} from './store';

/** A poll job may take this long from submission (queueing behind other jobs included). */
export const POLL_DEADLINE_MS = 5 * 60_000;

const KINDS: RecordKind[] = ['interfaces', 'neighbors', 'arp', 'mac', 'vlans'];

/** The most poll requests whose jobs go in one jobs.submit. */
const SUBMIT_BATCH = 500;

/** The poll as the API shows it. */
export function pollView(row: PollRow) {
  const finished = row.finished_at && row.started_at ? row.finished_at.getTime() - new Date(row.started_at).getTime() : null;
  return {
    id: row.id,
    device_id: row.device_id,
    trigger: row.trigger,
    transport: row.transport,
    status: row.status,
    error: row.error,
    counts: Object.fromEntries(KINDS.map((k) => [k, row.counts?.[k] ?? 0])) as Record<RecordKind, number>,
    sections: row.sections ?? [],
    queued_at: row.created_at,
    started_at: row.started_at,
    finished_at: row.finished_at,
    duration_ms: finished,
  };
}
export type PollView = ReturnType<typeof pollView>;

/** Reads a job result defensively: whatever an agent sends, the recorder gets a clean shape. */
export function parsePollResult(result: Record<string, unknown> | null): { sections: SectionResult[]; records: Partial<DiscoveryRecords> } {
  const sections = Array.isArray(result?.sections)
    ? (result!.sections as SectionResult[]).filter((s) => s && typeof s === 'object' && typeof s.name === 'string' && s.name in SECTION_RECORDS)
    : [];
  const raw = (result?.records ?? {}) as Record<string, unknown>;
  const records: Partial<DiscoveryRecords> = {};
  for (const k of KINDS)
    if (Array.isArray(raw[k])) (records as Record<string, unknown[]>)[k] = (raw[k] as unknown[]).filter((r) => r && typeof r === 'object');
  return { sections, records };
}

/**
 * What a poll's outcome stores: for a succeeded job, the sections whose records it replaces
 * (collected ones with their records, unsupported ones with none, so nothing of an older poll
 * stays), and the poll's final fields.
 */
function pollFinal(outcome: JobOutcome): { replaced: SectionRecords[] | null; final: PollFinal } {
  const { sections, records } = parsePollResult(outcome.result);
  const counts: Partial<Record<RecordKind, number>> = {};
  let replaced: SectionRecords[] | null = null;
  if (outcome.status === 'succeeded') {
    replaced = sections
      .filter((s) => collected(s) || s.status === 'unsupported')
      .map((section) => {
        const kind = SECTION_RECORDS[section.name];
        const list = collected(section) ? ((records[kind] ?? []) as { protocol?: string }[]) : [];
        return { kind, section: section.name, records: kind === 'neighbors' ? list.filter((r) => r.protocol === section.name) : list };
      });
    for (const k of KINDS) counts[k] = (records[k] ?? []).length;
  }
  // A section read only in part makes the poll partial as much as a failed one: records may be missing.
  const failed = sections.filter((s) => s.status === 'failed' || s.status === 'partial');
  const status = outcome.status === 'failed' ? 'failed' : failed.length > 0 ? 'partial' : 'succeeded';
  const error =
    outcome.status === 'failed'
      ? (outcome.error ?? 'The poll failed')
      : failed.length > 0
        ? failed.map((s) => `${s.name}: ${s.error}`).join('; ')
        : null;
  return { replaced, final: { status, error, counts, sections, started_at: outcome.startedAt, finished_at: outcome.finishedAt } };
}

/** How long a second request waits for another replica to store the open poll's job. */
const OPEN_POLL_WAIT_MS = 5000;

export class DiscoveryService {
  /**
   * Submits the poll's job together with those of the other requests of the moment (Batcher), so
   * concurrent requests share one jobs.submit (and one setJobs) instead of three round trips each.
   * Resolves once the job row is stored (or the poll ended failed because it could not be).
   */
  private readonly submissions = new Batcher<PollRow, void>(async (polls) => {
    await this.submit(this.jobs, polls);
    return polls.map(() => undefined);
  }, SUBMIT_BATCH);

  /** The requests of the moment read their devices and insert their polls in one statement (and one commit). */
  private readonly requests = new Batcher<PollRequest, RequestedPoll | undefined>((batch) => this.store.requestPolls(batch), SUBMIT_BATCH);

  constructor(
    readonly store: DiscoveryStore,
    private readonly settings: SettingsService,
    private readonly jobs: JobService,
    private readonly log: Logger,
  ) {}

  private async device(orgId: string, deviceId: string) {
    const device = await this.store.device(orgId, deviceId);
    if (!device) throw appError('DEVICE_NOT_FOUND');
    return device;
  }

  /**
   * Queues a poll now; when one is already queued or running, answers that one. The device read
   * and the poll insert are one statement shared with the requests arriving meanwhile (requests),
   * so is the job's submission (submissions), and the answer waits until its job row is stored.
   */
  async requestPoll(
    auth: Pick<AuthContext, 'orgId' | 'userId'>,
    deviceId: string,
    trigger: PollTrigger = 'manual',
  ): Promise<{ poll: PollView; created: boolean }> {
    const found = await this.requests.add({ orgId: auth.orgId, deviceId, trigger, requestedBy: auth.userId ?? null });
    if (!found) throw appError('DEVICE_NOT_FOUND');
    if (found.deviceType === 'snmp') throw appError('DISCOVERY_UNSUPPORTED_DEVICE');
    const row = found.created ? await this.queue(found.row) : await this.queued(found.row);
    return { poll: pollView(row), created: found.created };
  }

  /** Polls of this process whose job is being submitted, so a second request can wait for the first's job. */
  private readonly queuing = new Map<string, Promise<void>>();

  private async queue(row: PollRow): Promise<PollRow> {
    const submitted = this.submissions.add(row);
    this.queuing.set(row.id, submitted);
    try {
      await submitted;
    } finally {
      this.queuing.delete(row.id);
    }
    return row;
  }

  /**
   * An open poll found by a second request may still be waiting for its job row (the first request's
   * submission, in this process or another replica): answer only once it is stored, like the first.
   */
  private async queued(row: PollRow): Promise<PollRow> {
    if (row.job_id || row.status !== 'queued') return row;
    const local = this.queuing.get(row.id);
    if (local) await local.catch(() => undefined);
    for (let waited = 0; waited < OPEN_POLL_WAIT_MS; waited += 50) {
      const now = await this.store.poll(row.id);
      if (!now || now.job_id || now.status !== 'queued') return now ?? row;
      await new Promise((r) => setTimeout(r, 50));
    }
    return row;
  }

  /** Hands queued polls to the job service in one submission; polls it refuses end failed with the reason. */
  async submit(jobs: JobService, polls: PollRow | PollRow[]): Promise<void> {
    const list = Array.isArray(polls) ? polls : [polls];
    if (list.length === 0) return;
    try {
      const ids = await jobs.submit(
        list.map((p) => ({
          orgId: p.org_id,
          kind: 'poll' as const,
          deviceId: p.device_id,
          params: { transport: p.transport },
          groupId: p.id,
          deadlineMs: POLL_DEADLINE_MS,
        })),
      );
      await this.store.setJobs(list.map((p, i) => ({ id: p.id, job_id: ids[i] })));
    } catch (err) {
      // One bad spec fails a whole batch: try them one by one so only the bad one fails.
      if (list.length > 1) {
        for (const p of list) await this.submit(jobs, p);
        return;
      }
      const message = `The poll could not be queued: ${(err as Error).message}`;
      await this.store.failPoll(list[0].id, message);
      this.log.warn({ err, poll: list[0].id }, 'poll not queued');
    }
  }

  /** The 'poll' outcome handler: runs once per job, in the job's final transaction. */
  async recordOutcome(outcome: JobOutcome, trx: Knex.Transaction): Promise<void> {
    if (!outcome.groupId) return;
    const poll = await this.store.lockOpenPoll(trx, outcome.groupId);
    if (!poll || poll.device_id !== outcome.deviceId) return;
    const { replaced, final } = pollFinal(outcome);
    if (replaced)
      await this.store.replaceSections(trx, {
        orgId: poll.org_id,
        deviceId: poll.device_id,
        pollId: poll.id,
        at: outcome.finishedAt,
        sections: replaced,
      });
    await this.store.finishPoll(trx, poll.id, final);
  }

  /**
   * recordOutcome for many outcomes at once (the engine's handleMany): the open polls locked in
   * one statement, every device's replaced sections upserted in one, and every poll finished in
   * one. Outcomes are taken in order as recordOutcome
   * would take them one by one: one whose poll is not open (or ended by an earlier outcome of
   * the batch) or names another device records nothing.
   */
  async recordOutcomes(outcomes: JobOutcome[], trx: Knex.Transaction): Promise<void> {
    const polls = new Map(
      (await this.store.lockOpenPolls(trx, [...new Set(outcomes.flatMap((o) => (o.groupId ? [o.groupId] : [])))])).map((p) => [p.id, p]),
    );
    const replacing: SectionReplacement[] = [];
    const finals: PollFinalOf[] = [];
    for (const outcome of outcomes) {
      const poll = outcome.groupId ? polls.get(outcome.groupId) : undefined;
      if (!poll || poll.device_id !== outcome.deviceId) continue;
      polls.delete(poll.id); // finished: a later outcome of the same poll finds it closed
      const { replaced, final } = pollFinal(outcome);
      if (replaced) replacing.push({ orgId: poll.org_id, deviceId: poll.device_id, pollId: poll.id, at: outcome.finishedAt, sections: replaced });
      finals.push({ id: poll.id, ...final });
    }
    await this.store.replaceSectionsMany(trx, replacing);
    await this.store.finishPolls(trx, finals);
  }

  /** Forgets poll history older than the setting discovery.poll_history_days; answers how many polls went. */
  async pruneHistory(): Promise<number> {
    const days = await this.settings.get<number>('discovery.poll_history_days');
    const before = new Date(Date.now() - days * 86_400_000);
    let pruned = 0;
    for (;;) {
      const n = await this.store.pruneHistory(before);
      pruned += n;
      if (n === 0) break;
    }
    if (pruned > 0) this.log.info({ polls: pruned, days }, 'forgot old poll history');
    return pruned;
  }

  // ---- reads ------------------------------------------------------------------------------------

  async records(orgId: string, deviceId: string, kind: RecordKind, limit: number, offset: number, filter: { section?: string } = {}) {
    await this.device(orgId, deviceId);
    const r = await this.store.records(orgId, deviceId, kind, limit, offset, filter);
    return { device_id: deviceId, poll_id: r.poll_id, collected_at: r.collected_at, total: r.total, limit, offset, records: r.records };
  }

  async status(orgId: string, deviceId: string) {
    const device = await this.device(orgId, deviceId);
    const [history, lastOk, fallback] = await Promise.all([
      this.store.history(orgId, deviceId, 1, 0),
      this.store.lastSucceededAt(orgId, deviceId),
      this.settings.get<number>('discovery.default_poll_interval_minutes', orgId),
    ]);
    const latest = history.polls[0];
    return {
      device_id: deviceId,
      poll_enabled: device.poll_enabled,
      poll_interval_minutes: device.poll_interval_minutes ?? fallback,
      next_poll_at: device.poll_enabled ? device.next_poll_at : null,
      last_succeeded_at: lastOk,
      poll: latest ? pollView(latest) : null,
    };
  }

  async history(orgId: string, deviceId: string, limit: number, offset: number) {
    await this.device(orgId, deviceId);
    const { polls, total } = await this.store.history(orgId, deviceId, limit, offset);
    return { device_id: deviceId, polls: polls.map(pollView), total, limit, offset };
  }
}
