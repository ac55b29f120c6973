/**
 * SQL of discovery: poll rows, the records of the latest polls (a row per device and section),
 * and the background schedule.
 * Every read is scoped to the organization.
 */
import type { Knex } from 'knex';
import { hotQuery, PREPARED, type Db } from '../db/knex';
import type { DiscoveryRecords, SectionResult } from '../../../shared/src/discovery/records';

export type RecordKind = keyof DiscoveryRecords;
export type PollStatus = 'queued' | 'running' | 'succeeded' | 'partial' | 'failed';
export type PollTrigger = 'manual' | 'schedule';
export type { PollTransport } from '../../../shared/src/jobs/poll';
import type { PollTransport } from '../../../shared/src/jobs/poll';

export interface PollRow {
  id: string;
  org_id: string;
  device_id: string;
  trigger: PollTrigger;
  transport: PollTransport;
  status: PollStatus;
  job_id: string | null;
  error: string | null;
  requested_by: string | null;
  counts: Partial<Record<RecordKind, number>>;
  sections: SectionResult[];
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

export interface PollFinal {
  status: 'succeeded' | 'partial' | 'failed';
  error: string | null;
  counts: Partial<Record<RecordKind, number>>;
  sections: SectionResult[];
  started_at: Date | null;
  finished_at: Date;
}

export interface DueDevice {
  id: string;
  org_id: string;
  transport: PollTransport;
  poll_interval_minutes: number | null;
  /** false: only given its first (jittered) time, not polled now. */
  due: boolean;
}

const POLL_COLUMNS = [
  'id',
  'org_id',
  'device_id',
  'trigger',
  'transport',
  'status',
  'job_id',
  'error',
  'requested_by',
  'counts',
  'sections',
  'created_at',
  'started_at',
  'finished_at',
];

/** A poll's finished fields for several polls at once (finishPolls). */
export interface PollFinalOf extends PollFinal {
  id: string;
}

/** The records of one section of a device, as replaceSections stores them. */
export interface SectionRecords {
  kind: RecordKind;
  section: string;
  records: unknown[];
}

/** A manual poll request (requestPolls). */
export interface PollRequest {
  orgId: string;
  deviceId: string;
  trigger: PollTrigger;
  requestedBy: string | null;
}

/** What requestPolls answers for a request whose device was found. */
export interface RequestedPoll {
  deviceType: string;
  created: boolean;
  row: PollRow;
}

/** One poll's sections that replace what its device had. */
export interface SectionReplacement {
  orgId: string;
  deviceId: string;
  pollId: string;
  at: Date;
  sections: SectionRecords[];
}

const POLL_RETURNING = POLL_COLUMNS.join(', ');
/** The open poll's columns in POLL_COLUMNS order, read as pollSelect reads them (a running job shows). */
const OPEN_POLL_COLUMNS = POLL_COLUMNS.map((c) =>
  c === 'status'
    ? "CASE WHEN o.status = 'queued' AND j.status = 'running' THEN 'running' ELSE o.status END AS status"
    : c === 'started_at'
      ? 'COALESCE(o.started_at, j.started_at) AS started_at'
      : `o.${c}`,
).join(', ');

/**
 * POST /api/devices/:id/poll for the requests of the moment in one statement (requestPolls):
 * each request's device in its organization (none: no row, a 404), a queued poll inserted
 * unless the device is snmp or already has an open one, and otherwise that open poll. One row
 * per found request (`ord`): created true with the new poll, or false with the open poll (its
 * columns null when the insert met a poll this statement's snapshot cannot see yet). The
 * inserts go in device order, so two replicas' overlapping batches cannot deadlock. The open
 * poll is looked up by device, a LATERAL per device: as a join it was planned as a scan of every
 * open poll for each device (8 of a statement's 9.6 ms with 860 polls open).
 */
const REQUEST_POLLS_SQL = `WITH r AS (
    SELECT * FROM unnest(?::int[], ?::uuid[], ?::uuid[], ?::text[], ?::uuid[]) AS r(ord, org_id, device_id, trigger, requested_by)
  ), d AS (
    SELECT r.ord, d.id, d.org_id, d.device_type, r.trigger, r.requested_by,
           CASE WHEN p.automation_transport = 'gnmi' THEN 'gnmi' ELSE 'ssh' END AS transport
    FROM r JOIN devices d ON d.org_id = r.org_id AND d.id = r.device_id JOIN connection_profiles p ON p.id = d.profile_id
  ), ins AS (
    INSERT INTO discovery_polls (org_id, device_id, trigger, transport, requested_by)
    SELECT org_id, id, trigger, transport, requested_by FROM d WHERE device_type <> 'snmp' ORDER BY id
    ON CONFLICT (device_id) WHERE status = 'queued' DO NOTHING
    RETURNING ${POLL_RETURNING}
  )
  SELECT d.ord, d.device_type, true AS created, ins.* FROM d JOIN ins ON ins.device_id = d.id
  UNION ALL
  SELECT d.ord, d.device_type, false AS created, ${OPEN_POLL_COLUMNS}
  FROM d LEFT JOIN LATERAL (SELECT * FROM discovery_polls o WHERE o.device_id = d.id AND o.status = 'queued' LIMIT 1) o ON true
    LEFT JOIN jobs j ON j.id = o.job_id
  WHERE NOT EXISTS (SELECT 1 FROM ins WHERE ins.device_id = d.id)`;

/** Many devices' sections with their records (replaceSectionsMany). */
const SECTION_SET =
  'jsonb_to_recordset(?::jsonb) AS s(org_id uuid, device_id uuid, kind text, section text, poll_id uuid, collected_at timestamptz, records jsonb)';

/** A queued poll whose job is running reads as running, with the job's start time. */
const pollSelect = (db: Db | Knex.Transaction) =>
  db('discovery_polls as p')
    .leftJoin('jobs as j', 'j.id', 'p.job_id')
    .select(
      ...POLL_COLUMNS.filter((c) => c !== 'status' && c !== 'started_at').map((c) => `p.${c}`),
      db.raw("CASE WHEN p.status = 'queued' AND j.status = 'running' THEN 'running' ELSE p.status END AS status"),
      db.raw('COALESCE(p.started_at, j.started_at) AS started_at'),
    );

export class DiscoveryStore {
  constructor(readonly db: Db) {}

  /** The device of an organization with the transport its polls use; undefined when not found. */
  async device(
    orgId: string,
    deviceId: string,
  ): Promise<
    | {
        id: string;
        name: string;
        device_type: string;
        transport: PollTransport;
        poll_enabled: boolean;
        poll_interval_minutes: number | null;
        next_poll_at: Date | null;
      }
    | undefined
  > {
    const row = await this.db('devices as d')
      .join('connection_profiles as p', 'p.id', 'd.profile_id')
      .where({ 'd.org_id': orgId, 'd.id': deviceId })
      .first('d.id', 'd.name', 'd.device_type', 'd.poll_enabled', 'd.poll_interval_minutes', 'd.next_poll_at', 'p.automation_transport');
    if (!row) return undefined;
    const { automation_transport, ...rest } = row;
    return { ...rest, transport: automation_transport === 'gnmi' ? 'gnmi' : 'ssh' };
  }

  /**
   * Manual poll requests in one round trip (REQUEST_POLLS_SQL, a prepared statement), answered
   * in order: undefined where the organization has no such device; otherwise its type and either
   * the new queued poll (created) or the open one. Never inserts for an snmp device. Requests for
   * the same device share one answer; only the first of them can have created the poll.
   */
  async requestPolls(requests: PollRequest[]): Promise<(RequestedPoll | undefined)[]> {
    const keyOf = (r: PollRequest) => `${r.orgId}/${r.deviceId}`;
    // The first request of a device asks (its trigger and requester go on the poll); the others share its answer.
    const first = new Map<string, PollRequest>();
    for (const r of requests) if (!first.has(keyOf(r))) first.set(keyOf(r), r);
    const found = new Map<string, RequestedPoll>();
    for (let asking = [...first.values()]; asking.length > 0;) {
      const rows = await hotQuery<PollRow & { ord: number; device_type: string; created: boolean }>(this.db, REQUEST_POLLS_SQL, [
        asking.map((_, i) => i),
        asking.map((r) => r.orgId),
        asking.map((r) => r.deviceId),
        asking.map((r) => r.trigger),
        asking.map((r) => r.requestedBy),
      ]);
      const again: PollRequest[] = [];
      for (const { ord, device_type: deviceType, created, ...row } of rows) {
        // The open poll was committed after this statement's snapshot, or finished in between: ask again.
        if (deviceType === 'snmp' || row.id) found.set(keyOf(asking[ord]), { deviceType, created, row });
        else again.push(asking[ord]);
      }
      asking = again;
    }
    const answered = new Set<string>();
    return requests.map((r) => {
      const f = found.get(keyOf(r));
      if (!f) return undefined;
      const first = !answered.has(keyOf(r));
      answered.add(keyOf(r));
      return first ? f : { ...f, created: false };
    });
  }

  /** One poll by id, as the API shows it. */
  async poll(pollId: string): Promise<PollRow | undefined> {
    return pollSelect(this.db).where('p.id', pollId).first();
  }

  async setJobs(pairs: { id: string; job_id: string }[]): Promise<void> {
    if (pairs.length === 0) return;
    // p.id = ANY(...) so that polls are found by key, not by a scan of the whole history.
    await this.db.raw(
      `WITH v AS (SELECT * FROM unnest(?::uuid[], ?::uuid[]) AS v(id, job_id))
       UPDATE discovery_polls p SET job_id = v.job_id FROM v WHERE p.id = v.id AND p.id = ANY(ARRAY(SELECT id FROM v))`,
      [pairs.map((p) => p.id), pairs.map((p) => p.job_id)],
    );
  }

  /** Ends a poll that could not be handed to the job service. */
  async failPoll(pollId: string, error: string): Promise<void> {
    await this.db('discovery_polls').where({ id: pollId, status: 'queued' }).update({ status: 'failed', error, finished_at: new Date() });
  }

  /** Locks an open poll (the outcome handler's transaction). */
  async lockOpenPoll(trx: Knex.Transaction, pollId: string): Promise<PollRow | undefined> {
    return trx('discovery_polls').where({ id: pollId, status: 'queued' }).forUpdate().first(POLL_COLUMNS);
  }

  async finishPoll(trx: Knex.Transaction, pollId: string, final: PollFinal): Promise<void> {
    await trx('discovery_polls')
      .where({ id: pollId })
      .update({ ...final, counts: JSON.stringify(final.counts), sections: JSON.stringify(final.sections) });
  }

  /** Replaces the device's records of the given sections (replaceSectionsMany for one poll). */
  async replaceSections(trx: Knex.Transaction, p: SectionReplacement): Promise<void> {
    await this.replaceSectionsMany(trx, [p]);
  }

  // ---- many outcomes at once (DiscoveryService.recordOutcomes) --------------------------------

  /** Locks the open polls among `pollIds` in one statement, in id order (the outcome recorder's transaction). */
  async lockOpenPolls(trx: Knex.Transaction, pollIds: string[]): Promise<PollRow[]> {
    if (pollIds.length === 0) return [];
    const result = await trx
      .raw(`SELECT ${POLL_RETURNING} FROM discovery_polls WHERE id = ANY(?::uuid[]) AND status = 'queued' ORDER BY id FOR UPDATE`, [pollIds])
      .options(PREPARED);
    return result.rows as PollRow[];
  }

  /**
   * Replaces the given sections of many devices (each with its own poll) in one upsert: a
   * section's row holds its records as one array, so a poll writes a row per section, not per
   * record. Rows go in key order (the lock order of concurrent batches); a section named twice
   * keeps its last records.
   */
  async replaceSectionsMany(trx: Knex.Transaction, list: SectionReplacement[]): Promise<void> {
    const rows = new Map<
      string,
      { org_id: string; device_id: string; kind: RecordKind; section: string; poll_id: string; collected_at: Date; records: unknown[] }
    >();
    for (const p of list) {
      for (const s of p.sections)
        rows.set(`${p.deviceId} ${s.section}`, {
          org_id: p.orgId,
          device_id: p.deviceId,
          kind: s.kind,
          section: s.section,
          poll_id: p.pollId,
          collected_at: p.at,
          records: s.records,
        });
    }
    if (rows.size === 0) return;
    await trx
      .raw(
        `INSERT INTO discovery_sections (org_id, device_id, kind, section, poll_id, records, collected_at)
       SELECT s.org_id, s.device_id, s.kind, s.section, s.poll_id, s.records, s.collected_at FROM ${SECTION_SET}
       ORDER BY s.device_id, s.section
       ON CONFLICT (device_id, section) DO UPDATE
         SET org_id = excluded.org_id, kind = excluded.kind, poll_id = excluded.poll_id, records = excluded.records, collected_at = excluded.collected_at`,
        [JSON.stringify([...rows.values()])],
      )
      .options(PREPARED);
  }

  /** finishPoll for many polls in one statement. */
  async finishPolls(trx: Knex.Transaction, finals: PollFinalOf[]): Promise<void> {
    if (finals.length === 0) return;
    await trx
      .raw(
        `WITH v AS (SELECT * FROM jsonb_to_recordset(?::jsonb)
                AS v(id uuid, status text, error text, counts jsonb, sections jsonb, started_at timestamptz, finished_at timestamptz))
       UPDATE discovery_polls p SET status = v.status, error = v.error, counts = v.counts, sections = v.sections,
         started_at = v.started_at, finished_at = v.finished_at
       FROM v WHERE p.id = v.id AND p.id = ANY(ARRAY(SELECT id FROM v))`,
        [JSON.stringify(finals)],
      )
      .options(PREPARED);
  }

  /**
   * Forgets up to `limit` finished polls created before `before`, keeping each device's latest
   * poll (its /status) and any poll whose records are still the device's latest (the records
   * would go with it). Answers how many went.
   */
  async pruneHistory(before: Date, limit = 1000): Promise<number> {
    const result = await this.db.raw(
      `DELETE FROM discovery_polls WHERE id IN (
         SELECT p.id FROM discovery_polls p
          WHERE p.status <> 'queued' AND p.created_at < ?
            AND EXISTS (SELECT 1 FROM discovery_polls n WHERE n.org_id = p.org_id AND n.device_id = p.device_id AND n.created_at > p.created_at)
            AND NOT EXISTS (SELECT 1 FROM discovery_sections s WHERE s.poll_id = p.id)
          LIMIT ?)`,
      [before, limit],
    );
    return result.rowCount ?? 0;
  }

  // ---- reads ------------------------------------------------------------------------------------

  /**
   * One page of a device's records of a kind (by section, then in the order the device listed
   * them), with the total and the latest poll that found any (null when none did).
   */
  async records(orgId: string, deviceId: string, kind: RecordKind, limit: number, offset: number, filter: { section?: string } = {}) {
    const sections = () =>
      this.db('discovery_sections as s')
        .where({ 's.org_id': orgId, 's.device_id': deviceId, 's.kind': kind })
        .modify((q) => filter.section && q.where({ 's.section': filter.section }));
    const [rows, meta] = await Promise.all([
      sections()
        .joinRaw('CROSS JOIN LATERAL jsonb_array_elements(s.records) WITH ORDINALITY AS e(data, n)')
        .orderBy([{ column: 's.section' }, { column: 'e.n' }])
        .limit(limit)
        .offset(offset)
        .select('e.data'),
      sections().first(
        this.db.raw('COALESCE(sum(jsonb_array_length(s.records)), 0)::int AS total'),
        this.db.raw('max(s.collected_at) FILTER (WHERE jsonb_array_length(s.records) > 0) AS collected_at'),
        this.db.raw('(array_agg(s.poll_id ORDER BY s.collected_at DESC) FILTER (WHERE jsonb_array_length(s.records) > 0))[1] AS poll_id'),
      ),
    ]);
    return {
      records: rows.map((r: { data: unknown }) => r.data as Record<string, unknown>),
      total: (meta?.total as number) ?? 0,
      collected_at: (meta?.collected_at as Date | null) ?? null,
      poll_id: (meta?.poll_id as string | null) ?? null,
    };
  }

  async history(orgId: string, deviceId: string, limit: number, offset: number): Promise<{ polls: PollRow[]; total: number }> {
    const [polls, count] = await Promise.all([
      pollSelect(this.db)
        .where({ 'p.org_id': orgId, 'p.device_id': deviceId })
        .orderBy([
          { column: 'p.created_at', order: 'desc' },
          { column: 'p.id', order: 'desc' },
        ])
        .limit(limit)
        .offset(offset),
      this.db('discovery_polls').where({ org_id: orgId, device_id: deviceId }).first(this.db.raw('count(*)::int AS total')),
    ]);
    return { polls: polls as PollRow[], total: (count?.total as number) ?? 0 };
  }

  async lastSucceededAt(orgId: string, deviceId: string): Promise<Date | null> {
    const row = await this.db('discovery_polls')
      .where({ org_id: orgId, device_id: deviceId })
      .whereIn('status', ['succeeded', 'partial'])
      .max('finished_at as at')
      .first();
    return (row?.at as Date | null) ?? null;
  }

  // ---- background schedule ----------------------------------------------------------------------

  /**
   * Claims up to `limit` devices whose poll is due (or that were never scheduled) and moves
   * their next_poll_at on, in one transaction with FOR UPDATE SKIP LOCKED so that each device
   * is claimed by one controller. `nextAt` gives each row its next time (jitter included), set
   * for all in one statement. Due devices get a queued poll in the same transaction, inserted
   * in one statement (none where one is already open).
   */
  async claimDue(limit: number, nextAt: (row: DueDevice) => Promise<Date>): Promise<{ device: DueDevice; poll: PollRow }[]> {
    return this.db.transaction(async (trx) => {
      const rows = await trx('devices as d')
        .join('connection_profiles as p', 'p.id', 'd.profile_id')
        .where('d.poll_enabled', true)
        .where((q) => q.whereNull('d.next_poll_at').orWhere('d.next_poll_at', '<=', trx.fn.now()))
        .orderByRaw('d.next_poll_at NULLS FIRST')
        .limit(limit)
        .forUpdate('d')
        .skipLocked()
        .select('d.id', 'd.org_id', 'd.poll_interval_minutes', 'p.automation_transport', trx.raw('d.next_poll_at IS NOT NULL AS due'));
      const devices: DueDevice[] = rows.map((r: Record<string, any>) => ({
        id: r.id,
        org_id: r.org_id,
        poll_interval_minutes: r.poll_interval_minutes,
        transport: r.automation_transport === 'gnmi' ? 'gnmi' : 'ssh',
        due: r.due,
      }));
      if (devices.length === 0) return [];
      const times = await Promise.all(devices.map((d) => nextAt(d)));
      await trx
        .raw('UPDATE devices d SET next_poll_at = v.at FROM unnest(?::uuid[], ?::timestamptz[]) AS v(id, at) WHERE d.id = v.id', [
          devices.map((d) => d.id),
          times,
        ])
        .options(PREPARED);
      // Due devices get a queued poll, none where one is already open.
      const due = devices.filter((d) => d.due);
      if (due.length === 0) return [];
      const inserted = await trx
        .raw(
          `INSERT INTO discovery_polls (org_id, device_id, trigger, transport, requested_by)
         SELECT v.org_id, v.device_id, 'schedule', v.transport, NULL FROM unnest(?::uuid[], ?::uuid[], ?::text[]) AS v(org_id, device_id, transport)
         ON CONFLICT (device_id) WHERE status = 'queued' DO NOTHING RETURNING ${POLL_RETURNING}`,
          [due.map((d) => d.org_id), due.map((d) => d.id), due.map((d) => d.transport)],
        )
        .options(PREPARED);
      const byDevice = new Map(devices.map((d) => [d.id, d]));
      return (inserted.rows as PollRow[]).map((poll) => ({ device: byDevice.get(poll.device_id)!, poll }));
    });
  }

  /** Queued polls that never got a job (the controller stopped between claiming and submitting). */
  async orphans(olderThan: Date): Promise<PollRow[]> {
    return this.db('discovery_polls')
      .where({ status: 'queued' })
      .whereNull('job_id')
      .where('created_at', '<', olderThan)
      .limit(500)
      .select(POLL_COLUMNS);
  }

  /** Queued polls whose job ended without the outcome reaching this area (its handler was not registered). */
  async stale(olderThan: Date): Promise<{ id: string; job_status: string; job_error: string | null; finished_at: Date | null }[]> {
    return this.db('discovery_polls as p')
      .join('jobs as j', 'j.id', 'p.job_id')
      .where('p.status', 'queued')
      .whereIn('j.status', ['succeeded', 'failed'])
      .where('j.finished_at', '<', olderThan)
      .limit(500)
      .select('p.id', 'j.status as job_status', 'j.error as job_error', 'j.finished_at');
  }
}
