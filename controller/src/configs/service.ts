import type { Knex } from 'knex';
import type { FastifyBaseLogger as Logger } from 'fastify';
import type { SecretBox } from '../../../shared/src/crypto/secret-box';
import type { AuditService } from '../platform/audit-service';
import type { AuthContext } from '../auth/auth-service';
import { appError } from '../errors/app-error';
import type { JobOutcome, JobService } from '../jobs/types';
import { methodsOf, type BackupMethod, type PullMethod } from '../../../shared/src/device/backup-method';
import type { StructuredTransport } from '../../../shared/src/device/values';
import type { BackupJobParams, BackupJobResult } from '../../../shared/src/jobs/backup';
import type { TestCredentialResult } from '../../../shared/src/jobs/test-credential';
import { PLACEHOLDER_MARK, configPlaceholder, expandTranscript, mapAroundPlaceholders } from '../../../shared/src/jobs/transcript';
import type { SnapshotStore } from './snapshot-store';
import { channelOf, sha256, successfulVersion } from './backup-job';
import type { DeviceText, MaskFormat } from './config-secrets';
import { MaskError, type MaskPool } from './mask-pool';
import type { BackupDevice, ConfigStore, MaskingFacts, NewVersion } from './store';

/** A single pull's whole-job limit; the request waits a little longer so the job ends first. */
export const PULL_DEADLINE_MS = 120_000;
const PULL_WAIT_GRACE_MS = 10_000;
export const TEST_CREDENTIAL_DEADLINE_MS = 45_000;

export interface BackupPlan {
  methods: BackupMethod[];
  structured_transport: StructuredTransport | null;
}

/**
 * Which methods a device's backup tries. `both` skips structured when the profile has no
 * automation transport: every default pull of an SSH-only device would otherwise store a failed
 * structured version, and `latest` (the newest version) would be that empty one. Asked for alone,
 * structured is tried and fails like any attempt (a failed version saying why; a pull answers 502).
 */
export function planBackup(device: BackupDevice, method: PullMethod): BackupPlan {
  const transport = device.automation_transport;
  if (method === 'both' && !transport) return { methods: ['cli'], structured_transport: null };
  return { methods: methodsOf(method), structured_transport: transport };
}

/** What one recorded outcome stored. */
export interface RecordedBackup {
  ok: boolean;
  error: string | null;
}

/**
 * The masking of one device's text (maskConfigSecrets, with the device's dialect and credentials
 * bound): read as `format`, `text` (a transcript, an error) unless told. A long text is masked in
 * a worker (MaskPool); one whose masking hits the pool's limits fails with a 503 saying so.
 */
export interface DeviceTextMask {
  (text: string, format?: MaskFormat | string): Promise<string>;
  /** A unified diff of the device's configs, each hunk side read as `format` (maskDiffSecrets). */
  diff(diff: string, format?: MaskFormat | string): Promise<string>;
  /** On the event loop, for text known to be short: a backup's transcript as it is recorded (the agent cuts it at 1 MiB) and errors. */
  now(text: string, format?: MaskFormat | string): string;
  /** The text as the mask pool takes it (to diff two of them). */
  text(text: string, format?: MaskFormat | string): DeviceText;
}

/** A device's text to show masked: a config, or with `diff` a unified diff of two of its configs. */
export interface TextToMask {
  deviceId: string;
  text: string;
  format: string | undefined;
  diff?: boolean;
}

/** A failed job's result: every method fails with the job's error. */
const NO_RESULT: BackupJobResult = { results: [], transcript: '' };
const DEVICE_GONE: RecordedBackup = { ok: false, error: 'The device was deleted before its backup finished' };

export interface BackupToStore {
  orgId: string;
  deviceId: string;
  jobId: string | null;
  /** pull, snapshot, deployment. */
  source: string;
  snapshotId: string | null;
  methods: BackupMethod[];
  transport: StructuredTransport | null;
  result: BackupJobResult;
  /** The job's own error, used for methods the result does not mention. */
  jobError: string | null;
}

/**
 * Config backups: single pulls, the 'backup' outcome recorder shared with snapshots, version
 * reads and diffs, and credential tests.
 */
export class ConfigService {
  constructor(
    readonly store: ConfigStore,
    private readonly snapshots: SnapshotStore,
    private readonly secrets: SecretBox,
    private readonly jobService: JobService,
    private readonly log: Logger,
    /**
     * How configs are shown: the masks (keyed HMAC, config-secrets.ts; long texts in workers) and
     * the audit of reveals. Readable, so that tests can watch the masks at work (shown.masks.busy).
     */
    readonly shown: { masks: MaskPool; audit?: AuditService },
  ) {}

  jobs(): JobService {
    return this.jobService;
  }

  async device(orgId: string, deviceId: string): Promise<BackupDevice> {
    const device = await this.store.findDevice(orgId, deviceId);
    if (!device) throw appError('CONFIG_DEVICE_NOT_FOUND');
    return device;
  }

  /** Devices by id in the caller's organization; 404 naming the ones that are not there. */
  async devices(orgId: string, deviceIds: string[]): Promise<BackupDevice[]> {
    const unique = [...new Set(deviceIds)];
    const devices = await this.store.findDevices(orgId, unique);
    if (devices.length < unique.length) {
      const found = new Set(devices.map((d) => d.id));
      const missing = unique.filter((id) => !found.has(id));
      throw appError('CONFIG_DEVICES_NOT_FOUND', `Devices not found: ${missing.join(', ')}`, { missing });
    }
    return devices;
  }

  /** POST /pull: one backup job trying each method, waited for; the recorder stores the versions. */
  async pull(me: AuthContext, deviceId: string, method: PullMethod) {
    const device = await this.device(me.orgId, deviceId);
    const jobs = this.jobs();
    const plan = planBackup(device, method);
    const pullId = await this.store.insertPullRequest({
      org_id: me.orgId,
      device_id: device.id,
      methods: plan.methods,
      structured_transport: plan.structured_transport,
      requested_by: me.userId,
      requested_by_name: me.username,
    });
    const params: BackupJobParams = { methods: plan.methods, structured_transport: plan.structured_transport };
    const [jobId] = await jobs.submit([
      { orgId: me.orgId, kind: 'backup', deviceId: device.id, params, deadlineMs: PULL_DEADLINE_MS, groupId: pullId },
    ]);
    await this.store.setPullJob(pullId, jobId);

    const outcome = await jobs.wait([jobId], PULL_DEADLINE_MS + PULL_WAIT_GRACE_MS).then(
      (o) => o[0],
      () => undefined,
    );
    if (!outcome) {
      throw appError(
        'CONFIG_PULL_TIMEOUT',
        `The pull of ${device.name} is still running; its result will be stored as a version when it ends (job ${jobId}).`,
        { job_id: jobId },
      );
    }
    const versions = await this.store.versionsOfJob(jobId);
    const summary = versions.map((v) => ({
      method: v.method as BackupMethod,
      version: v.version as number,
      status: v.status as string,
      error_message: v.error_message as string | null,
    }));
    const succeeded = (m: BackupMethod) => summary.some((v) => v.method === m && v.status === 'success');
    const parts = summary.map((v) =>
      v.status === 'success' ? `${v.method} stored as version ${v.version}` : `${v.method} failed (version ${v.version}): ${v.error_message}`,
    );
    if (summary.length === 0) parts.push(`no version stored: ${outcome.error ?? 'the job ended without a result'}`);
    if (method === 'both' && !plan.methods.includes('structured'))
      parts.push('structured skipped: the connection profile has no automation_transport');
    const cli = succeeded('cli');
    const structured = succeeded('structured');
    if (!cli && !structured) {
      throw appError('CONFIG_PULL_FAILED', `Config pull of ${device.name} failed: ${parts.join('; ')}`, { versions: summary });
    }
    return { message: `Config pull of ${device.name}: ${parts.join('; ')}`, cli, structured, versions: summary };
  }

  /**
   * The one recorder of 'backup' outcomes, run by the job service inside the transaction that
   * makes the job final: stores one version per method tried (failed ones too), with the
   * masked transcript, and moves the snapshot the job belongs to. Many outcomes at once take
   * the same three statements as one (contexts, versions, snapshot devices).
   */
  async recordBackups(outcomes: JobOutcome<'backup'>[], trx: Knex.Transaction): Promise<RecordedBackup[]> {
    const contexts = await this.store.backupContexts(trx, outcomes);
    const maskerOf = this.maskers();
    const versions: NewVersion[] = [];
    const recorded: RecordedBackup[] = [];
    for (const [i, outcome] of outcomes.entries()) {
      const context = contexts[i];
      if (!context) {
        recorded.push(DEVICE_GONE);
        continue;
      }
      const { groupId } = outcome;
      const parsed = outcome.result ?? NO_RESULT;
      const plan = context.run ?? context.pull;
      const methods = (plan?.methods ?? parsed.results.map((r) => r.method)) as BackupMethod[];
      const rows = versionRows((await maskerOf(context.facts)).now, {
        orgId: outcome.orgId,
        deviceId: outcome.deviceId,
        jobId: outcome.jobId,
        // A groupId that is neither a live run nor a pull: a snapshot deleted while collecting.
        source: context.pull || !groupId ? 'pull' : 'snapshot',
        snapshotId: context.run ? groupId : null,
        methods: methods.length > 0 ? methods : ['cli'],
        transport: plan?.structured_transport ?? null,
        result: parsed,
        jobError: outcome.status === 'failed' ? (outcome.error ?? 'The backup job failed') : outcome.error,
      });
      versions.push(...rows);
      recorded.push(recordedOf(rows));
    }
    await this.store.insertVersions(trx, versions);
    // Only a pending row of that run changes, so a pull's groupId or a stale job is a no-op.
    await this.snapshots.recordDevices(
      trx,
      outcomes.flatMap((o, i) =>
        o.groupId && (contexts[i]?.run || !contexts[i]) ? [{ snapshotId: o.groupId, deviceId: o.deviceId, jobId: o.jobId, ...recorded[i] }] : [],
      ),
    );
    return recorded;
  }

  async recordBackup(outcome: JobOutcome<'backup'>, trx: Knex.Transaction): Promise<RecordedBackup> {
    return (await this.recordBackups([outcome], trx))[0];
  }

  /** Stores one backup's versions; also used by other areas that fetch configs (deployments). */
  async storeBackup(trx: Knex.Transaction, b: BackupToStore): Promise<RecordedBackup> {
    const facts = await this.store.lockMaskingFacts(trx, b.orgId, b.deviceId);
    if (!facts) return DEVICE_GONE;
    const rows = versionRows((await this.masker(facts)).now, b);
    await this.store.insertVersions(trx, rows);
    return recordedOf(rows);
  }

  /**
   * The one masking of a device's text, as every route shows it (configs, diffs, transcripts,
   * errors): its dialect's secret rules, then its profile's credentials (opened here, never
   * stored or returned) wherever they still appear. The rules are in config-secrets.ts.
   */
  private async masker(facts: MaskingFacts | undefined): Promise<DeviceTextMask> {
    const credentials: string[] = [];
    for (const sealed of [facts?.password_enc, facts?.private_key_enc, facts?.enable_password_enc]) {
      if (!sealed) continue;
      try {
        credentials.push(await this.secrets.open(sealed));
      } catch (err) {
        this.log.warn({ err: (err as Error).message }, 'could not open a profile secret for masking');
      }
    }
    const job = (text: string, format: string, diff = false): DeviceText => ({ text, format, deviceType: facts?.device_type, credentials, diff });
    const masks = this.shown.masks;
    const mask = (text: string, format = 'text') => masks.mask(job(text, format)).catch(notShown);
    mask.diff = (diff: string, format = 'text') => masks.mask(job(diff, format, true)).catch(notShown);
    mask.now = (text: string, format = 'text') => masks.maskHere(job(text, format));
    mask.text = (text: string, format = 'text') => job(text, format);
    return mask;
  }

  /** masker() for many devices: devices of one profile and type share one, their credentials opened once. */
  private maskers(): (facts: MaskingFacts | undefined) => Promise<DeviceTextMask> {
    const byFacts = new Map<string, Promise<DeviceTextMask>>();
    return (facts) => {
      const key = JSON.stringify(facts ?? null);
      if (!byFacts.has(key)) byFacts.set(key, this.masker(facts));
      return byFacts.get(key)!;
    };
  }

  /**
   * The session transcript of one stored backup, every secret masked, or undefined when the
   * organization has no such version. The configs it fetched are stored once, in their versions,
   * and go back in place here. The whole text is masked as it is read, as configs are: the
   * configs put back, and what older releases stored masked by keywords only (with the config
   * in it, before placeholders).
   */
  async transcript(orgId: string, configId: string): Promise<string | undefined> {
    const row = await this.store.transcript(orgId, configId);
    if (!row) return undefined;
    const [configs, facts] = await Promise.all([
      row.transcript.includes(PLACEHOLDER_MARK) ? this.store.jobConfigs(orgId, row.device_id, row.job_id) : [],
      this.store.maskingFacts(orgId, row.device_id),
    ]);
    const mask = await this.masker(facts);
    return await mask(expandTranscript(row.transcript, (method) => configs.find((c) => c.method === method)?.config_text));
  }

  /** How a device's versions are shown: as stored for reveal, else with config_text masked. */
  private async shownVersions(orgId: string, deviceId: string, reveal: boolean) {
    if (reveal) return async <T>(row: T) => row;
    const mask = await this.masker(await this.store.maskingFacts(orgId, deviceId));
    return async <T extends { config_text: string; config_format: string }>(row: T): Promise<T> => ({
      ...row,
      config_text: await mask(row.config_text, row.config_format),
    });
  }

  /** The raw stored version (restore, rollback and the reads below). */
  async rawVersion(orgId: string, deviceId: string, version: number | null) {
    await this.device(orgId, deviceId);
    const row = await this.store.getVersion(orgId, deviceId, version);
    if (!row) {
      throw appError(
        'CONFIG_VERSION_NOT_FOUND',
        version === null ? 'The device has no stored config versions yet' : `Config version ${version} not found for this device`,
      );
    }
    return row;
  }

  /**
   * A stored version as shown: the device's own secrets masked, unless `reveal` (permission
   * configs.secrets, checked and audited by revealed()).
   */
  async version(orgId: string, deviceId: string, version: number | null, reveal = false) {
    const [row, show] = await Promise.all([this.rawVersion(orgId, deviceId, version), this.shownVersions(orgId, deviceId, reveal)]);
    return await show(row);
  }

  /**
   * Device texts as shown, in the order given (a deployment's rendered configs and its dry runs'
   * diffs): each masked by its device's one masker, as its stored configs are (its dialect's rules
   * over the text, or over each hunk side's text as a whole for a diff, then its credentials). One
   * read of the devices' masking facts; a device that is gone gets every dialect's rules and no
   * credentials.
   */
  async maskTexts(orgId: string, texts: TextToMask[]): Promise<string[]> {
    if (texts.length === 0) return [];
    const facts = await this.store.maskingFactsOf(orgId, [...new Set(texts.map((d) => d.deviceId))]);
    const maskerOf = this.maskers();
    return Promise.all(
      texts.map(async ({ deviceId, text, format, diff }) => {
        const mask = await maskerOf(facts.get(deviceId));
        return await (diff ? mask.diff(text, format) : mask(text, format));
      }),
    );
  }

  /** Reads raw text for a caller with configs.secrets (403 otherwise) and records that they did. */
  async revealed<T>(me: AuthContext, subject: Record<string, string>, what: string, read: () => Promise<T>): Promise<T> {
    if (!me.permissions.includes('configs.secrets')) {
      throw appError(
        'FORBIDDEN',
        'Insufficient permissions: reveal=true needs the configs.secrets permission; without it the secrets in the config are masked',
      );
    }
    const shown = await read();
    await this.shown.audit?.record({
      kind: 'config.secrets_revealed',
      orgId: me.orgId,
      userId: me.userId,
      username: me.username,
      details: { ...subject, what },
    });
    return shown;
  }

  async list(orgId: string, deviceId: string, limit: number, offset: number) {
    await this.device(orgId, deviceId);
    return this.store.listVersions(orgId, deviceId, limit, offset);
  }

  async setNotes(me: AuthContext, deviceId: string, version: number, notes: string) {
    await this.device(me.orgId, deviceId);
    const row = await this.store.setNotes(me.orgId, deviceId, version, notes, me.username);
    if (!row) throw appError('CONFIG_VERSION_NOT_FOUND', `Config version ${version} not found for this device`);
    return row;
  }

  /**
   * Unified line diff between two versions of a device, both masked first unless `reveal`: in the
   * mask pool, which takes long versions to a worker (masking and diffing 32 MiB takes seconds).
   */
  async diff(orgId: string, deviceId: string, oldVersion: number, newVersion: number, reveal = false) {
    const [older, newer, mask] = await Promise.all([
      this.rawVersion(orgId, deviceId, oldVersion),
      this.rawVersion(orgId, deviceId, newVersion),
      reveal ? null : this.store.maskingFacts(orgId, deviceId).then((facts) => this.masker(facts)),
    ]);
    const side = (row: { config_text: string; config_format: string }) => (mask ? mask.text(row.config_text, row.config_format) : row.config_text);
    const { identical, diff, additions, deletions } = await this.shown.masks.diff({ before: side(older), after: side(newer) }).catch(notShown);
    return {
      old_version: oldVersion,
      new_version: newVersion,
      old_format: older.config_format as string,
      new_format: newer.config_format as string,
      identical,
      diff,
      additions,
      deletions,
    };
  }

  /** Tries each device's credentials (connect and authenticate, nothing else) and waits for all. */
  async testCredentials(me: AuthContext, deviceIds: string[]) {
    const devices = await this.devices(me.orgId, deviceIds);
    const jobs = this.jobs();
    const started = Date.now();
    const ids = await jobs.submit(
      devices.map((d) => ({
        orgId: me.orgId,
        kind: 'test_credential' as const,
        deviceId: d.id,
        params: {},
        deadlineMs: TEST_CREDENTIAL_DEADLINE_MS,
      })),
    );
    const outcomes = await jobs.wait(ids, TEST_CREDENTIAL_DEADLINE_MS + PULL_WAIT_GRACE_MS).catch(() => [] as JobOutcome[]);
    const byJob = new Map(outcomes.map((o) => [o.jobId, o]));
    const results = devices.map((d, i) => {
      const o = byJob.get(ids[i]);
      const reported: Partial<TestCredentialResult> = (o?.kind === 'test_credential' && o.result) || {};
      const success = o?.status === 'succeeded' && reported.ok !== false;
      const said = reported.message || null;
      return {
        device_id: d.id,
        device_name: d.name,
        success,
        message: success
          ? (said ?? 'Credentials accepted')
          : o
            ? (said ?? o.error ?? 'Credential test failed')
            : 'No answer before the deadline; the test is still running',
        duration_ms: o?.startedAt ? o.finishedAt.getTime() - o.startedAt.getTime() : Date.now() - started,
        transports: (reported.transports ?? []).map(({ transport, status, message }) => ({ transport, status, message })),
      };
    });
    return { results, total: results.length, succeeded: results.filter((r) => r.success).length, failed: results.filter((r) => !r.success).length };
  }

  withBackupInfo(orgId: string, filter: { site_id?: string; device_type?: string }, limit: number, offset: number) {
    return this.store.devicesWithBackupInfo(orgId, filter, limit, offset);
  }
}

/**
 * A text the mask pool could not mask (time or memory limit) is not shown: 503 saying why, and
 * how to read a stored config all the same.
 */
function notShown(err: unknown): never {
  if (!(err instanceof MaskError)) throw err;
  throw appError(
    'SERVICE_UNAVAILABLE',
    `The device's text is not shown: ${err.message}. It is never shown unmasked; ` +
      'a stored config version can be read as stored with reveal=true (permission configs.secrets).',
  );
}

/** One version per method tried (failed ones too), transcript and errors masked (on the event loop: they are short). */
function versionRows(mask: DeviceTextMask['now'], b: BackupToStore): NewVersion[] {
  const fetched = (method: BackupMethod) => b.result.results.find((r) => r.method === method);
  // The config a method stores as a successful version.
  const storedConfig = (method: BackupMethod) => {
    const r = fetched(method);
    return r?.config && !r.error ? r.config : undefined;
  };
  // A config stored as a successful version stays out of the stored transcript, its placeholder
  // kept (transcript() puts it back when read), so it is stored once; any other config the result
  // carried goes back in now.
  const configOf = (method: BackupMethod) =>
    b.methods.includes(method) && storedConfig(method) ? configPlaceholder(method) : fetched(method)?.config?.text;
  const transcript = mapAroundPlaceholders(expandTranscript(b.result.transcript ?? '', configOf), (text) => mask(text));
  return b.methods.map((method) => {
    const r = fetched(method);
    const channel = channelOf(method, b.transport);
    const base = { org_id: b.orgId, device_id: b.deviceId, method, source: b.source, snapshot_id: b.snapshotId, job_id: b.jobId, transcript };
    const config = storedConfig(method);
    if (config) return { ...base, ...successfulVersion(config) };
    const error = mask(r?.error ?? b.jobError ?? `The agent reported no result for the ${method} method`);
    return {
      ...base,
      config_format: channel.format,
      pulled_via: channel.via,
      status: 'failed',
      error_message: error,
      config_text: '',
      config_hash: sha256(''),
      size_bytes: 0,
      line_count: 0,
    };
  });
}

/** What storing `rows` means for the device: ok when any method succeeded, else every failure. */
function recordedOf(rows: NewVersion[]): RecordedBackup {
  const failures = rows.filter((r) => r.status === 'failed');
  return {
    ok: failures.length < rows.length,
    error: failures.length ? failures.map((f) => (rows.length > 1 ? `${f.method}: ${f.error_message}` : f.error_message)).join('; ') : null,
  };
}
