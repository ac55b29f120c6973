import type { Knex } from 'knex';
import type { DryRunResult } from '../../../shared/src/jobs/deploy';
import { plural } from '../../../shared/src/words';
import type { JobOutcome } from '../jobs/types';
import type { DeploymentDeviceRow, DeploymentStore, DeviceStatus, DeviceWrite, LockedDevice, LogBatch, LogLine } from './store';

/** What one outcome does to its device: the changed fields and the log lines. */
interface Recorded {
  outcome: JobOutcome;
  device: LockedDevice;
  fields: Partial<DeploymentDeviceRow>;
  lines: LogLine[];
}

/**
 * Records deploy, dry_run and rollback outcomes (of any deployments) on their device rows with a
 * few set-based statements: device rows locked in one, written in one with the log lines.
 * Exactly what each outcome alone would do: outcomes of the same device (a rare burst with a
 * stale one) are recorded in order, one pass each. The deployments settle after the commit.
 */
export async function recordDeviceOutcomes(store: DeploymentStore, outcomes: JobOutcome[], trx: Knex.Transaction): Promise<void> {
  let rest = outcomes.filter((o) => o.groupId);
  while (rest.length > 0) {
    const seen = new Set<string>();
    const pass: JobOutcome[] = [];
    const later: JobOutcome[] = [];
    for (const o of rest) {
      const key = `${o.groupId}/${o.deviceId}`;
      (seen.has(key) ? later : pass).push(o);
      seen.add(key);
    }
    await recordPass(store, pass, trx);
    rest = later;
  }
}

/** One pass: at most one outcome per deployment device. */
async function recordPass(store: DeploymentStore, outcomes: JobOutcome[], trx: Knex.Transaction): Promise<void> {
  // The device rows are locked for the devices' own record; the deployment row only by the
  // settle after the commit, so that outcomes of one deployment are recorded side by side.
  const locked = await store.lockDevices(
    trx,
    outcomes.map((o) => ({ deployment_id: o.groupId!, device_id: o.deviceId })),
  );
  const devices = new Map(locked.map((d) => [`${d.deployment_id}/${d.device_id}`, d]));
  // In the outcomes' order: those recorded, and those their device no longer waited for that came with lines (late).
  const logged: Recorded[] = [];
  const late = new Set<Recorded>();
  for (const outcome of outcomes) {
    const device = devices.get(`${outcome.groupId}/${outcome.deviceId}`);
    if (!device || device.org_id !== outcome.orgId) continue;
    const r = recordOne(outcome, device);
    if (r) logged.push(r);
    else if (outcome.logs?.length) {
      const lines = notRecorded(outcome, device);
      late.add(lines);
      logged.push(lines);
    }
  }
  if (logged.length === 0) return;
  const recorded = logged.filter((r) => !late.has(r));
  // The device rows, then the agent's log lines of each job and the controller's: one statement.
  await store.recordDevices(
    trx,
    recorded.map(deviceWrite),
    logged.map((r): LogBatch => ({
      deployment_id: r.device.deployment_id,
      org_id: r.device.org_id,
      device_id: r.device.device_id,
      // The lines it sent earlier stay in job_logs for a job whose outcome was not recorded.
      job_id: late.has(r) ? null : r.outcome.jobId,
      // The lines its agent sent with the result, after those it sent earlier (job_logs), then the controller's.
      lines: [...agentLines(r.outcome, r.device.device_id), ...r.lines],
    })),
  );
}

/** The device row as an outcome leaves it: its changed fields over the locked row. */
function deviceWrite({ device, fields }: Recorded): DeviceWrite {
  return {
    deployment_id: device.deployment_id,
    device_id: device.device_id,
    status: fields.status ?? device.status,
    job_id: fields.job_id === undefined ? device.job_id : fields.job_id,
    backup_config_id: fields.backup_config_id ?? device.backup_config_id,
    changed: fields.changed ?? device.changed,
    error_message: fields.error_message === undefined ? device.error_message : fields.error_message,
    dry_run_diff: fields.dry_run_diff === undefined ? device.dry_run_diff : fields.dry_run_diff,
    left_sha256: fields.left_sha256 === undefined ? device.left_sha256 : fields.left_sha256,
    stamp: fields.status !== undefined,
  };
}

/**
 * What one outcome does to its locked device row, or null for a stale or repeated outcome (the
 * device moved on, or another job is its current one), which is ignored.
 */
function recordOne(outcome: JobOutcome, device: LockedDevice): Recorded | null {
  const expected: DeviceStatus[] =
    outcome.kind === 'rollback' ? ['restore_queued', 'restoring', 'rollback_queued', 'rolling_back'] : ['queued', 'running'];
  if (!expected.includes(device.status) || (device.job_id !== null && device.job_id !== outcome.jobId)) return null;
  const recorded: Recorded = { outcome, device, fields: { job_id: outcome.jobId }, lines: [] };
  const line = (level: LogLine['level'], message: string) =>
    recorded.lines.push({ level, message: `${device.device_name}: ${message}`, device_id: device.device_id });
  const change =
    outcome.kind === 'dry_run' ? dryRunChange(outcome) : outcome.kind === 'deploy' ? deployChange(outcome, device) : rollbackChange(outcome, device);
  Object.assign(recorded.fields, change.fields);
  line(change.level, change.message);
  return recorded;
}

/** An outcome's change to its device: fields, and the one line the controller adds. */
interface Change {
  fields: Partial<DeploymentDeviceRow>;
  level: LogLine['level'];
  message: string;
}

/** A dry run: completed with its diff, or failed with the reason. */
function dryRunChange(outcome: JobOutcome): Change {
  const result = outcome.result as unknown as DryRunResult | null;
  if (outcome.status === 'succeeded' && typeof result?.diff === 'string') {
    return {
      fields: { status: 'completed', changed: result.changed === true, error_message: null, dry_run_diff: result.diff },
      level: 'info',
      message: dryRunSummary(result),
    };
  }
  // A succeeded outcome without its diff: recorded late from the job row, which does not keep it.
  const error = outcome.error ?? "The dry run's diff was not recorded; run the dry run again";
  return { fields: { status: 'failed', changed: false, error_message: error, dry_run_diff: null }, level: 'error', message: error };
}

function dryRunSummary(result: DryRunResult): string {
  const how = `${result.exactness}: ${result.method}`;
  return result.changed
    ? `dry run: would add ${plural(result.additions, 'line')} and remove ${plural(result.deletions, 'line')} (${how}); nothing was changed`
    : `dry run: nothing would change (${how})`;
}

function deployChange(outcome: JobOutcome, device: LockedDevice): Change {
  const result = outcome.kind === 'deploy' ? outcome.result : null;
  // The backup the controller kept before the change (stored mid-job, see backup-store.ts) is
  // named here, after the job's own lines, so the log reads in the order things happened.
  const backup = device.backup_version === null ? '' : ` (pre-deployment backup: config version ${device.backup_version})`;
  if (outcome.status === 'succeeded') {
    // changed: unless the agent found the running config already as rendered (null: not verified).
    return {
      fields: { status: 'completed', changed: result?.changed !== false, error_message: null, left_sha256: result?.after_sha256 ?? null },
      level: 'info',
      message: `deployed${result?.verified ? ' and verified' : ''}${backup}`,
    };
  }
  const error = outcome.error ?? 'The deploy job failed';
  // restored false: part of the change may be on the device and putting the backup back failed too.
  const changed = result?.restored === false;
  return { fields: { status: 'failed', changed, error_message: error }, level: 'error', message: `${error}${backup}` };
}

const KEEPS_DEPLOYED = '; the device keeps the deployed config unless the restore stopped part-way';

/** A restore (an atomic stack's changed devices after a failure) or a rollback. */
function rollbackChange(outcome: JobOutcome, device: LockedDevice): Change {
  // A push the device took whose read-back still differs from the backup (a replace that stopped
  // part-way, an edit answered ok but applied in part) is no restore, whatever the job's status.
  const differs = outcome.kind === 'rollback' && outcome.status === 'succeeded' && outcome.result?.matches === false;
  const ok = outcome.status === 'succeeded' && !differs;
  const reason = differs
    ? 'the backup was pushed, but the running config read afterwards still differs from it; the device may be partly restored'
    : (outcome.error ?? 'no reason given');
  const changedSince = outcome.kind === 'rollback' && outcome.result?.changed_since === true;
  if (device.status === 'restore_queued' || device.status === 'restoring') {
    if (ok) {
      const why = device.error_message ?? 'the stack is atomic and another device failed';
      const error = `Restored from its pre-deployment backup because ${why}`;
      return {
        fields: { status: 'restored', changed: false, error_message: error },
        level: 'info',
        message: 'restored from its pre-deployment backup',
      };
    }
    const error = changedSince
      ? `Not restored from the pre-deployment backup: ${reason}`
      : `Restore from the pre-deployment backup failed: ${reason}${differs ? '' : KEEPS_DEPLOYED}`;
    return { fields: { status: 'restore_failed', error_message: error }, level: 'error', message: error };
  }
  if (ok)
    return {
      fields: { status: 'rolled_back', changed: false, error_message: null },
      level: 'info',
      message: 'rolled back to its pre-deployment backup',
    };
  const error = changedSince
    ? `Rollback refused: ${reason}. To put the pre-deployment backup back anyway, roll back with {"force": true} (the console's ` +
      "'Roll back anyway')"
    : `Rollback failed: ${reason}`;
  return { fields: { status: 'rollback_failed', error_message: error }, level: 'error', message: error };
}

/** The lines an agent sent with a job's result, as deployment log lines of its device. */
function agentLines(outcome: JobOutcome, deviceId: string): LogLine[] {
  return (outcome.logs ?? []).map((l) => ({ level: l.level, message: l.text, device_id: deviceId, created_at: new Date(l.at) }));
}

/**
 * An outcome its device no longer waited for (it moved on meanwhile): nothing of the device
 * changes, but its agent's lines are kept in the deployment log, followed by a line saying so.
 */
function notRecorded(outcome: JobOutcome, device: LockedDevice): Recorded {
  const message = `${device.device_name}: a late ${outcome.kind} result (${outcome.status}) was not recorded: the device had moved on`;
  return { outcome, device, fields: {}, lines: [{ level: 'warn', message, device_id: device.device_id }] };
}
