import type { Knex } from 'knex';
import { PREPARED, type Db } from '../db/knex';
import type { LogLine } from '../../../shared/src/jobs/messages';
import type { JobKind, JobOutcome } from './types';

export type JobStatus = 'queued' | 'dispatched' | 'running' | 'succeeded' | 'failed';
export const OPEN: JobStatus[] = ['queued', 'dispatched', 'running'];

export interface JobRow {
  id: string;
  org_id: string;
  kind: JobKind;
  device_id: string;
  group_id: string | null;
  params: Record<string, unknown>;
  status: JobStatus;
  pool: string | null;
  site_id: string | null;
  transport: string | null;
  attempt: number;
  stream_seq: number | null;
  agent_id: string | null;
  error: string | null;
  result: Record<string, unknown> | null;
  record_failures: number;
  deadline_at: Date;
  created_at: Date;
  dispatched_at: Date | null;
  started_at: Date | null;
  finished_at: Date | null;
}

/** What the recording of agent events reads of their jobs. */
export type EventJob = Pick<JobRow, 'id' | 'org_id' | 'kind' | 'device_id' | 'pool' | 'status' | 'attempt' | 'agent_id' | 'error' | 'deadline_at'>;

/** A job just made final (without its params: nothing after the end reads them), and whether another job of its device is queued behind it. */
export interface FinalRow extends Omit<JobRow, 'params'> {
  next_queued: boolean;
}

/** A log line an agent sent for one attempt of a job. */
export interface LogRow {
  job_id: string;
  attempt: number;
  agent_id: string;
  line: LogLine;
}

export type NewJob = Pick<JobRow, 'id' | 'org_id' | 'kind' | 'device_id' | 'group_id' | 'params' | 'deadline_at'>;

export interface Dispatched {
  id: string;
  attempt: number;
  pool: string;
  site_id: string | null;
  stream_seq: number | null;
  transport: string;
}

export interface FinalFields {
  status: 'succeeded' | 'failed';
  error: string | null;
  result: Record<string, unknown> | null;
  agentId: string | null;
  startedAt: Date | null;
  /**
   * The attempt the agent ran (agents' results). A quick agent's result can come before the
   * dispatch pass that sent that attempt has committed it, while the row still reads the attempt
   * before: the row takes the later one.
   */
  attempt?: number;
  /** The SSH host key the agent saw (result events of agents that report it). */
  hostKey?: { type: string; fingerprint: string };
  /** The gNMI TLS certificate the agent saw (result events of agents that report it). */
  gnmiCert?: { sha256: string; subject: string; not_after: string | null };
}

export function outcomeOf(row: Omit<JobRow, 'params'>): JobOutcome {
  // The result was checked against its kind's schema when it arrived (or is its stored form).
  return {
    jobId: row.id,
    kind: row.kind,
    orgId: row.org_id,
    deviceId: row.device_id,
    groupId: row.group_id,
    status: row.status as 'succeeded' | 'failed',
    error: row.error,
    result: row.result,
    agentId: row.agent_id,
    startedAt: row.started_at,
    finishedAt: row.finished_at as Date,
  } as JobOutcome;
}

export const DISPATCH_LOCK = 'switchboard.jobs.dispatch';

/** The identity a final job reported, as markFinalMany reads it. */
const PIN_INPUT = 'ssh_fingerprint text, ssh_type text, cert_sha256 text, cert_subject text, cert_not_after timestamptz';
const SSH_NEW = 'd.ssh_host_key_sha256 IS NULL AND k.ssh_fingerprint IS NOT NULL';
const CERT_NEW = 'd.gnmi_cert_sha256 IS NULL AND k.cert_sha256 IS NOT NULL';
/** Pins the identities of `k` (one row per device) where the device has none of that kind yet. */
const PIN_UPDATE = `UPDATE devices d SET
    ssh_host_key_sha256 = CASE WHEN ${SSH_NEW} THEN k.ssh_fingerprint ELSE d.ssh_host_key_sha256 END,
    ssh_host_key_type = CASE WHEN ${SSH_NEW} THEN k.ssh_type ELSE d.ssh_host_key_type END,
    ssh_host_key_seen_at = CASE WHEN ${SSH_NEW} THEN now() ELSE d.ssh_host_key_seen_at END,
    gnmi_cert_sha256 = CASE WHEN ${CERT_NEW} THEN k.cert_sha256 ELSE d.gnmi_cert_sha256 END,
    gnmi_cert_subject = CASE WHEN ${CERT_NEW} THEN k.cert_subject ELSE d.gnmi_cert_subject END,
    gnmi_cert_not_after = CASE WHEN ${CERT_NEW} THEN k.cert_not_after ELSE d.gnmi_cert_not_after END,
    gnmi_cert_seen_at = CASE WHEN ${CERT_NEW} THEN now() ELSE d.gnmi_cert_seen_at END
   FROM k
  WHERE d.id = k.device_id AND d.org_id = k.org_id AND ((${SSH_NEW}) OR (${CERT_NEW}))`;

/** Every column but result and params: the recorder already holds the result it just wrote, and a deploy job's params carry its rendered change set. */
const FINAL_COLUMNS = [
  'id',
  'org_id',
  'kind',
  'device_id',
  'group_id',
  'status',
  'pool',
  'site_id',
  'transport',
  'attempt',
  'stream_seq',
  'agent_id',
  'error',
  'record_failures',
  'deadline_at',
  'created_at',
  'dispatched_at',
  'started_at',
  'finished_at',
];

/**
 * SQL of new jobs (one jsonb parameter of NewJob rows with their `ord`): the first job, in order,
 * whose device is not in its organization, and only when there is none, the insert of them all.
 * One statement, where a check and knex's row-by-row VALUES were two round trips. Devices are
 * read by key (= ANY): an anti-join against the recordset's default estimate of 100 rows scans them all.
 */
const INSERT_JOBS = `WITH r AS (
    SELECT * FROM jsonb_to_recordset(?::jsonb)
      AS r(ord int, id uuid, org_id uuid, kind text, device_id uuid, group_id uuid, params jsonb, deadline_at timestamptz)),
  found AS (SELECT d.id, d.org_id FROM devices d WHERE d.id = ANY(ARRAY(SELECT device_id FROM r))),
  missing AS (
    SELECT r.device_id FROM r WHERE NOT EXISTS (SELECT 1 FROM found d WHERE d.id = r.device_id AND d.org_id = r.org_id)
     ORDER BY r.ord LIMIT 1),
  ins AS (
    INSERT INTO jobs (id, org_id, kind, device_id, group_id, params, deadline_at)
    SELECT id, org_id, kind, device_id, group_id, params, deadline_at FROM r WHERE NOT EXISTS (SELECT 1 FROM missing) ORDER BY r.ord)
  SELECT (SELECT device_id FROM missing) AS missing`;

/** The only place with job SQL. */
export class JobsStore {
  constructor(private readonly db: Db) {}

  /**
   * Inserts the jobs, in order, when every job's device exists in the job's organization; else
   * inserts none and answers the first job's device that does not (INSERT_JOBS, one round trip).
   */
  async insertIfDevicesExist(jobs: NewJob[], q: Knex = this.db): Promise<{ missing: string | null }> {
    const input = jobs.map((j, ord) => ({ ...j, ord }));
    const { rows } = await q.raw(INSERT_JOBS, [JSON.stringify(input)]).options(PREPARED);
    return { missing: (rows[0] as { missing: string | null } | undefined)?.missing ?? null };
  }

  /** Runs `fn` while holding the dispatch lock: one dispatcher at a time across replicas. */
  async withDispatchLock<T>(fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    return this.db.transaction(async (trx) => {
      await trx.raw('SELECT pg_advisory_xact_lock(hashtext(?))', [DISPATCH_LOCK]);
      return fn(trx);
    });
  }

  /**
   * Queued jobs whose device has no job in flight, oldest first, at most one per device (the
   * caller keeps the first of each device). The devices in flight are read once, as a hashed
   * NOT IN: the NOT EXISTS it replaces was planned, on the statistics of a young or fast-changing
   * jobs table, as an anti-join scanning every open job for each queued one (80 ms a pass with
   * 400 queued and 600 in flight, against 0.7 ms).
   */
  async dispatchCandidates(trx: Knex.Transaction, limit: number): Promise<JobRow[]> {
    return trx('jobs as j')
      .where('j.status', 'queued')
      .where('j.deadline_at', '>', trx.fn.now())
      .whereNotIn('j.device_id', trx('jobs as k').whereIn('k.status', ['dispatched', 'running']).select('k.device_id'))
      .orderBy('j.seq')
      .limit(limit)
      .select('j.*');
  }

  async markDispatched(trx: Knex.Transaction, rows: Dispatched[]): Promise<void> {
    if (rows.length === 0) return;
    await trx.raw(
      `UPDATE jobs SET status = 'dispatched', dispatched_at = now(), agent_id = NULL, started_at = NULL,
              attempt = u.attempt, pool = u.pool, site_id = u.site_id, stream_seq = u.stream_seq, transport = u.transport
         FROM unnest(?::uuid[], ?::int[], ?::text[], ?::uuid[], ?::bigint[], ?::text[]) AS u(id, attempt, pool, site_id, stream_seq, transport)
        WHERE jobs.id = u.id AND jobs.status = 'queued'`,
      [
        rows.map((r) => r.id),
        rows.map((r) => r.attempt),
        rows.map((r) => r.pool),
        rows.map((r) => r.site_id),
        rows.map((r) => r.stream_seq),
        rows.map((r) => r.transport),
      ] as never,
    );
  }

  /** Remembers where a waiting job would go, so its deadline error can name the site. */
  async setPool(trx: Knex.Transaction, rows: { id: string; pool: string; site_id: string | null }[]): Promise<void> {
    if (rows.length === 0) return;
    await trx.raw(
      `UPDATE jobs SET pool = u.pool, site_id = u.site_id
         FROM unnest(?::uuid[], ?::text[], ?::uuid[]) AS u(id, pool, site_id)
        WHERE jobs.id = u.id AND jobs.status = 'queued' AND (jobs.pool IS DISTINCT FROM u.pool OR jobs.site_id IS DISTINCT FROM u.site_id)`,
      [rows.map((r) => r.id), rows.map((r) => r.pool), rows.map((r) => r.site_id)] as never,
    );
  }

  /** The job locked for finishing, or undefined when it is already final (or locked elsewhere with skipLocked). */
  async lockOpen(trx: Knex.Transaction, id: string, skipLocked = false): Promise<JobRow | undefined> {
    const q = trx('jobs').where({ id }).whereIn('status', OPEN).first('*').options(PREPARED);
    return skipLocked ? q.forUpdate().skipLocked() : q.forUpdate();
  }

  /** markFinalMany for one job the caller holds locked open. */
  async markFinal(trx: Knex.Transaction, id: string, f: FinalFields, stored: Record<string, unknown> | null = f.result): Promise<FinalRow> {
    const [row] = await this.markFinalMany(trx, [{ id, fields: f, stored }]);
    if (!row) throw new Error(`job ${id} is no longer open`);
    return row;
  }

  /**
   * Writes the final fields of open jobs in one statement; `stored` is the form of the result kept
   * on the job row (a kind may keep less than its handler read). No lock is needed first: the
   * UPDATE locks each row and re-checks it is still open, so a job another replica finished
   * meanwhile is left out. Answers the rows it made final with `fields.result`, not re-read.
   *
   * The same statement pins, trust on first use, the SSH host key and gNMI TLS certificate the
   * agent saw for the device of each job it made final, where none is pinned yet (a device keeps
   * a pin it has; a mismatch failed the session instead): one statement per batch, not two.
   */
  async markFinalMany(
    trx: Knex.Transaction,
    finals: { id: string; fields: FinalFields; stored: Record<string, unknown> | null }[],
  ): Promise<FinalRow[]> {
    if (finals.length === 0) return [];
    const input = finals.map(({ id, fields: f, stored }, ord) => ({
      id,
      ord,
      status: f.status,
      error: f.error,
      result: stored,
      agent_id: f.agentId,
      started_at: f.startedAt,
      attempt: f.attempt ?? null,
      ssh_fingerprint: f.hostKey?.fingerprint ?? null,
      ssh_type: f.hostKey?.type ?? null,
      cert_sha256: f.gnmiCert?.sha256 ?? null,
      cert_subject: f.gnmiCert?.subject ?? null,
      cert_not_after: f.gnmiCert?.not_after ?? null,
    }));
    const { rows } = await trx
      .raw(
        `WITH i AS (SELECT * FROM jsonb_to_recordset(?::jsonb)
                      AS i(id uuid, ord int, status text, error text, result jsonb, agent_id uuid, started_at timestamptz, attempt int, ${PIN_INPUT})),
              f AS (
         UPDATE jobs j SET status = i.status, error = i.error, result = i.result, agent_id = i.agent_id, started_at = i.started_at, finished_at = now(),
                attempt = GREATEST(j.attempt, COALESCE(i.attempt, j.attempt))
           FROM i
          WHERE j.id = i.id AND j.status IN ('queued', 'dispatched', 'running') AND j.id = ANY(ARRAY(SELECT id FROM i)) -- by key, not a scan of the history
          RETURNING ${FINAL_COLUMNS.map((c) => `j.${c}`).join(', ')}, i.ord,
            EXISTS (SELECT 1 FROM jobs q WHERE q.org_id = j.org_id AND q.device_id = j.device_id
                      AND q.finished_at IS NULL AND q.status = 'queued' AND q.id <> j.id) AS next_queued),
              k AS (
         SELECT DISTINCT ON (f.device_id) f.org_id, f.device_id, i.ssh_fingerprint, i.ssh_type, i.cert_sha256, i.cert_subject, i.cert_not_after
           FROM f JOIN i ON i.id = f.id
          WHERE i.ssh_fingerprint IS NOT NULL OR i.cert_sha256 IS NOT NULL
          ORDER BY f.device_id, f.ord),
              pin AS (${PIN_UPDATE})
       SELECT ${FINAL_COLUMNS.join(', ')}, next_queued FROM f`,
        [JSON.stringify(input)],
      )
      .options(PREPARED);
    const results = new Map(finals.map((f) => [f.id, f.fields.result]));
    return (rows as FinalRow[]).map((row) => ({ ...row, result: results.get(row.id) ?? null }));
  }

  async bumpRecordFailures(id: string): Promise<number> {
    const [row] = await this.db('jobs').where({ id }).increment('record_failures', 1).returning('record_failures');
    return row?.record_failures ?? 0;
  }

  /**
   * An agent took the job (possibly after another agent of the pool died with it), at the attempt
   * it names: not one the job was sent again at since it was read.
   */
  async markStarted(rows: { id: string; attempt: number; agent_id: string; at: Date }[]): Promise<void> {
    if (rows.length === 0) return;
    await this.db
      .raw(
        `UPDATE jobs SET status = 'running', agent_id = u.agent_id, started_at = u.at
         FROM unnest(?::uuid[], ?::int[], ?::uuid[], ?::timestamptz[]) AS u(id, attempt, agent_id, at)
        WHERE jobs.id = u.id AND jobs.attempt = u.attempt AND jobs.status IN ('dispatched', 'running')`,
        [rows.map((r) => r.id), rows.map((r) => r.attempt), rows.map((r) => r.agent_id), rows.map((r) => r.at)] as never,
      )
      .options(PREPARED);
  }

  /** Puts an unfinished job back in the queue (its agent was revoked, or could not read it); with `orgId`, only a job of that organization. */
  async requeue(id: string, attempt?: number, orgId?: string): Promise<boolean> {
    const q = this.db('jobs').where({ id }).whereIn('status', ['dispatched', 'running']);
    if (attempt !== undefined) q.where({ attempt });
    if (orgId !== undefined) q.where({ org_id: orgId });
    const n = await q.update({ status: 'queued', agent_id: null, started_at: null, stream_seq: null });
    return n > 0;
  }

  /** Whether a job sent in the message `seq` of `transport` (a batch) is still open. */
  async messageOpen(seq: number, transport: string): Promise<boolean> {
    return Boolean(await this.db('jobs').where({ stream_seq: seq, transport }).whereIn('status', OPEN).first('id'));
  }

  /** The jobs of `refs` still open at the given attempt, of the agent's organization and pool (for a redelivered batch). */
  async stillOpen(orgId: string, pool: string, refs: { job_id: string; attempt: number }[]): Promise<string[]> {
    if (refs.length === 0) return [];
    const rows: { id: string }[] = await this.db
      .raw(
        `SELECT j.id FROM jobs j JOIN unnest(?::uuid[], ?::int[]) AS r(id, attempt) ON j.id = r.id AND j.attempt = r.attempt
          WHERE j.org_id = ? AND j.pool = ? AND j.status IN ('dispatched', 'running')`,
        [refs.map((r) => r.job_id), refs.map((r) => r.attempt), orgId, pool] as never,
      )
      .then((r: { rows: { id: string }[] }) => r.rows);
    return rows.map((r) => r.id);
  }

  /** Whether the device's connection profile has allowed_networks (see dispatcher.ts unguarded). */
  async deviceLimitsNetworks(deviceId: string, q: Knex = this.db): Promise<boolean> {
    return Boolean(
      await q('devices as d')
        .join('connection_profiles as p', 'p.id', 'd.profile_id')
        .where('d.id', deviceId)
        .whereRaw("p.allowed_networks <> '{}'")
        .first('d.id'),
    );
  }

  async deviceBusy(deviceId: string, exceptId: string, q: Knex = this.db): Promise<boolean> {
    return Boolean(
      await q('jobs').where({ device_id: deviceId }).whereIn('status', ['dispatched', 'running']).whereNot({ id: exceptId }).first('id'),
    );
  }

  /** Jobs a previous in-process agent held when the process stopped. */
  async requeueTransport(transport: string): Promise<number> {
    return this.db('jobs')
      .where({ transport })
      .whereIn('status', ['dispatched', 'running'])
      .update({ status: 'queued', agent_id: null, started_at: null, stream_seq: null });
  }

  async jobsById(ids: string[]): Promise<Map<string, EventJob>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db('jobs')
      .whereRaw('id = ANY(?::uuid[])', [ids])
      .select('id', 'org_id', 'kind', 'device_id', 'pool', 'status', 'attempt', 'agent_id', 'error', 'deadline_at')
      .options(PREPARED);
    return new Map(rows.map((r: JobRow) => [r.id, r]));
  }

  async insertLogs(rows: LogRow[], q: Knex = this.db): Promise<void> {
    if (rows.length === 0) return;
    // One statement text whatever the number of lines, so it stays a prepared statement.
    await q
      .raw(
        `INSERT INTO job_logs (job_id, attempt, agent_id, level, text, at)
       SELECT * FROM unnest(?::uuid[], ?::int[], ?::uuid[], ?::text[], ?::text[], ?::timestamptz[])`,
        [
          rows.map((r) => r.job_id),
          rows.map((r) => r.attempt),
          rows.map((r) => r.agent_id),
          rows.map((r) => r.line.level),
          rows.map((r) => r.line.text),
          rows.map((r) => r.line.at),
        ] as never,
      )
      .options(PREPARED);
  }

  async logs(jobId: string): Promise<{ at: Date; level: string; text: string; attempt: number; agent_id: string | null }[]> {
    return this.db('job_logs').where({ job_id: jobId }).orderBy('id').select('at', 'level', 'text', 'attempt', 'agent_id');
  }

  async expired(limit: number): Promise<string[]> {
    const rows: { id: string }[] = await this.db('jobs')
      .whereIn('status', OPEN)
      .where('deadline_at', '<=', this.db.fn.now())
      .orderBy('deadline_at')
      .limit(limit)
      .select('id');
    return rows.map((r) => r.id);
  }

  async finals(ids: string[]): Promise<JobRow[]> {
    if (ids.length === 0) return [];
    return this.db('jobs').whereRaw('id = ANY(?::uuid[])', [ids]).whereIn('status', ['succeeded', 'failed']).select('*');
  }

  async find(id: string): Promise<JobRow | undefined> {
    return this.db('jobs').where({ id }).first('*');
  }

  /** Forgets finished jobs (and their log lines) after the retention period. */
  async prune(before: Date): Promise<number> {
    const result = await this.db.raw(
      `DELETE FROM jobs WHERE id IN (SELECT id FROM jobs WHERE status IN ('succeeded', 'failed') AND finished_at < ? LIMIT 1000)`,
      [before],
    );
    return result.rowCount ?? 0;
  }
}
