import type { DeployChange, DeployResult } from '../../../shared/src/jobs/deploy';
import { plural } from '../../../shared/src/words';
import { DriverError, type DeviceSession, type FetchedConfig } from '../drivers/types';
import { describeError, type JobContext, type JobResultOf } from './context';

/**
 * Deployment job kinds, run on the agent of the device's site, over the device's deploy
 * transport: gNMI or NETCONF for structured templates, SSH CLI for cli templates.
 *
 * `deploy` runs in one session: read the running config, have the controller store it
 * (ctx.storeBackup, answered before anything changes), then apply every service of the device as
 * ONE change set (one SetRequest, one candidate commit, or the CLI lines in one configuration
 * session) and read the running config again to verify. The controller keeps the first backup of
 * the job, so a job redelivered after its agent died mid-push compares with and restores to the
 * config from before the change, never its own half-changed reading. When a CLI without commit
 * refuses a line after taking earlier ones, the backup is put back in the same session before the
 * job reports the failure. The result carries no backup: the controller has it already.
 *
 * `rollback`: one session: put a backup back with replace semantics (used for the restore of an
 * atomic stack after a failure, and for POST /deployments/:id/rollback).
 */
export async function runDeploy(ctx: JobContext<'deploy'>): Promise<JobResultOf<'deploy'>> {
  const { params } = ctx;
  const { transport } = params;
  const changes = params.changes ?? [];
  // No session transcript: it would carry the whole config twice; the job's log lines say what happened.
  const result: DeployResult = { applied: false, verified: false, changed: null };
  let session: DeviceSession | undefined;
  let step = 'connect';
  try {
    session = await ctx.open(transport);
    if (!session.apply) throw new Error(`the ${transport} driver cannot apply changes`);
    step = 'backup';
    const fresh = await session.fetchConfig();
    step = 'storing the backup';
    const backup = await ctx.storeBackup(fresh);
    // One line per step that happened (a failed step is told by the error line): every line of
    // every device is stored in the deployment log, so fewer, fuller lines.
    const read = `backup: ${fresh.text.length} bytes of ${fresh.format} running config over ${transport}`;
    ctx.log(
      backup.text === fresh.text ? 'info' : 'warn',
      backup.text === fresh.text
        ? `${read}, stored by the controller before any change`
        : `${read}; the controller keeps an earlier attempt's backup (this one found the device already partly changed); comparing with and ` +
            'restoring to that one',
    );
    step = 'push';
    await applyOrRestore(ctx, session, changes, backup, result);
    result.applied = true;
    ctx.log('info', `the device accepted ${plural(changes.length, 'service')} as one change set`);
    if (params.verify !== false) {
      step = 'verify';
      const after = await session.fetchConfig();
      result.verified = true;
      result.changed = after.text !== backup.text;
      ctx.log('info', result.changed ? 'verified: the running config changed' : 'verified: the running config already matched (no change)');
    }
    return { status: 'succeeded', error: null, result };
  } catch (err) {
    const e = describeError(err, ctx.signal);
    const message = ctx.mask(e.message);
    if (e.cause) result.error_cause = e.cause;
    ctx.log('error', `${step} failed: ${message}`);
    // A failed verify still means the change went in: the job succeeded, unverified.
    if (result.applied) return { status: 'succeeded', error: null, result };
    return { status: 'failed', error: `${step} failed: ${message}`, result };
  } finally {
    await session?.close().catch(() => undefined);
  }
}

/**
 * Applies the change set. When the device took part of it before refusing the rest (a CLI
 * without commit), the backup goes back in the same session before the failure is reported,
 * and `result.restored` says whether that worked.
 */
async function applyOrRestore(
  ctx: JobContext<'deploy'>,
  session: DeviceSession,
  changes: DeployChange[],
  backup: FetchedConfig,
  result: DeployResult,
): Promise<void> {
  try {
    await session.apply!(changes);
  } catch (err) {
    if (!(err instanceof DriverError && err.partial && session.restore)) throw err;
    ctx.log('warn', `push failed after part of the change was taken (${ctx.mask(err.message)}); restoring the pre-deployment backup`);
    try {
      await session.restore(backup);
      result.restored = true;
      ctx.log('info', 'the device is back on its pre-deployment config');
    } catch (restoreErr) {
      result.restored = false;
      throw new DriverError(
        err.kind,
        `${err.message}; restoring the backup failed too, the device is partly changed: ${(restoreErr as Error).message}`,
      );
    }
    throw new DriverError(err.kind, `${err.message}; the device was restored from its pre-deployment backup`);
  }
}

export async function runRollback(ctx: JobContext<'rollback'>): Promise<JobResultOf<'rollback'>> {
  const { params } = ctx;
  const { transport, backup } = params;
  let session: DeviceSession | undefined;
  try {
    session = await ctx.open(transport);
    if (!session.restore) throw new Error(`the ${transport} driver cannot restore a configuration`);
    ctx.log(
      'info',
      `${params.purpose === 'restore' ? 'restoring' : 'rolling back to'} the pre-deployment backup (${backup.text.length} bytes, replace)`,
    );
    await session.restore(backup);
    const after = await session.fetchConfig();
    const matches = after.text === backup.text;
    ctx.log(
      matches ? 'info' : 'warn',
      matches ? 'the running config equals the backup' : 'the running config differs from the backup text after the restore',
    );
    return { status: 'succeeded', error: null, result: { restored: true, matches } };
  } catch (err) {
    const e = describeError(err, ctx.signal);
    const message = ctx.mask(e.message);
    ctx.log('error', `restore failed: ${message}`);
    return { status: 'failed', error: message, result: { restored: false, ...(e.cause ? { error_cause: e.cause } : {}) } };
  } finally {
    await session?.close().catch(() => undefined);
  }
}
