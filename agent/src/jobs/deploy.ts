import { configDigest, restoreScope, type DeployChange, type DeployResult } from '../../../shared/src/jobs/deploy';
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
 * job reports the failure. The result carries no backup: the controller has it already. A NETCONF
 * or gNMI backup that holds nothing is no way back (emptyBackup): the job fails before the push.
 *
 * `rollback`: one session: put a backup back with replace semantics (used for the restore of an
 * atomic stack after a failure, and for POST /deployments/:id/rollback); never an empty one.
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
    step = 'checking the backup';
    const empty = emptyBackup(backup);
    if (empty) throw new Error(`${empty}: refusing to change a device that could not be restored`);
    step = 'push';
    await applyOrRestore(ctx, session, changes, backup, result);
    result.applied = true;
    ctx.log('info', `the device accepted ${plural(changes.length, 'service')} as one change set`);
    if (params.verify !== false) {
      step = 'verify';
      const after = await session.fetchConfig();
      result.verified = true;
      result.changed = after.text !== backup.text;
      result.after_sha256 = configDigest(after.text);
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
 * Why a structured (NETCONF or gNMI) backup that holds nothing cannot be put back, or null. A
 * restore replaces the whole configuration with the backup (gNMI replaces /, NETCONF removes every
 * top-level node the backup lacks), so an empty one, from a device whose config read answered
 * nothing, would wipe it: no deploy pushes where that would be the way back, no restore sends it.
 */
function emptyBackup(backup: FetchedConfig): string | null {
  if (backup.format === 'cli') return null;
  const text = backup.text.trim();
  if (text !== '' && !(backup.format === 'json' && isEmptyJson(text))) return null;
  return `the pre-deployment backup is empty (reading the config over ${backup.via} found nothing)`;
}

function isEmptyJson(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return value === null || (typeof value === 'object' && Object.keys(value).length === 0);
  } catch {
    return false; // not JSON at all: the driver's restore refuses it with its own reason
  }
}

/**
 * Applies the change set. When part of it may be on the device (a CLI without commit took some
 * lines before refusing one, a NETCONF device without :rollback-on-error refused part of an edit
 * of running, or a line, edit or commit got no answer), the backup goes back before
 * the failure is reported: in the same session, or in a new one when that session is broken (a
 * timeout, or a line that cut the management path); `result.restored` says whether it worked.
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
    ctx.log('warn', `push failed after part of the change may have been taken (${ctx.mask(err.message)}); restoring the pre-deployment backup`);
    const inSession = await restoreBackup(ctx, session, backup);
    // The broken session goes first: it may hold the device's configuration lock.
    if (inSession !== null) await session.close().catch(() => undefined);
    const problem = inSession === null ? null : await restoreBackup(ctx, null, backup);
    result.restored = problem === null;
    if (problem !== null) {
      throw new DriverError(err.kind, `${err.message}; restoring the backup failed too, the device may be partly changed: ${problem}`);
    }
    ctx.log('info', 'the device is back on its pre-deployment config');
    throw new DriverError(err.kind, `${err.message}; the device was restored from its pre-deployment backup`);
  }
}

/**
 * Puts the backup back over `session`, or over a new session when null, and reads the device
 * again: a change whose answer never came may still land after the restore (a device finishing
 * what its client gave up on), so only a read that finds the backup counts. Answers null, or why not.
 */
async function restoreBackup(ctx: JobContext<'deploy'>, session: DeviceSession | null, backup: FetchedConfig): Promise<string | null> {
  let own: DeviceSession | undefined;
  try {
    if (!session) {
      ctx.log('warn', 'restoring over a new session');
      own = await ctx.open(ctx.params.transport);
    }
    const s = (session ?? own)!;
    const scope = restoreScope(ctx.params.changes ?? []);
    await s.restore!(backup, scope);
    if (!isRestored(s, await s.fetchConfig(), backup, scope)) return 'after the restore the running config still differs from the backup';
    return null;
  } catch (err) {
    const message = ctx.mask((err as Error).message ?? String(err));
    if (session) ctx.log('warn', `restoring in the same session failed: ${message}`);
    return message;
  } finally {
    await own?.close().catch(() => undefined);
  }
}

/** Whether the device reads as the backup where the restore put it back (the whole text, unless scoped). */
function isRestored(session: DeviceSession, running: FetchedConfig, backup: FetchedConfig, scope: string[] | undefined): boolean {
  return scope && session.restored ? session.restored(running, backup, scope) : running.text === backup.text;
}

export async function runRollback(ctx: JobContext<'rollback'>): Promise<JobResultOf<'rollback'>> {
  const { params } = ctx;
  const { transport, backup } = params;
  const what = params.purpose === 'restore' ? 'restore' : 'rollback';
  const notDone = what === 'restore' ? 'not restored' : 'not rolled back';
  const empty = emptyBackup(backup);
  if (empty) {
    const error = `${notDone}: ${empty}; putting it back would replace the whole configuration with nothing`;
    ctx.log('error', error);
    return { status: 'failed', error, result: { restored: false } };
  }
  let session: DeviceSession | undefined;
  try {
    session = await ctx.open(transport);
    if (!session.restore) throw new Error(`the ${transport} driver cannot restore a configuration`);
    if (params.expect_sha256) {
      // A device already on the backup (a redelivered job whose first attempt restored it, or a
      // push refused before it changed anything) needs nothing; one on neither config is left alone.
      const now = configDigest((await session.fetchConfig()).text);
      if (now === configDigest(backup.text)) {
        ctx.log('info', 'the running config already equals the pre-deployment backup; nothing pushed');
        return { status: 'succeeded', error: null, result: { restored: true, matches: true } };
      }
      if (now !== params.expect_sha256) {
        const error =
          `${notDone}: the running config is no longer the one this deployment left (changed ` +
          'since, by hand or by a later deployment, or left part-way by a failed push), and putting the backup back would undo that too';
        ctx.log('error', error);
        return { status: 'failed', error, result: { restored: false, changed_since: true } };
      }
    }
    const where = params.paths ? ` of ${params.paths.join(', ')} only` : '';
    ctx.log(
      'info',
      `${what === 'restore' ? 'restoring' : 'rolling back to'} the pre-deployment backup (${backup.text.length} bytes, replace${where})`,
    );
    await session.restore(backup, params.paths);
    const matches = isRestored(session, await session.fetchConfig(), backup, params.paths);
    ctx.log(
      matches ? 'info' : 'warn',
      matches ? 'the running config equals the backup' : 'the running config differs from the backup text after the restore',
    );
    return { status: 'succeeded', error: null, result: { restored: true, matches } };
  } catch (err) {
    const e = describeError(err, ctx.signal);
    const message = ctx.mask(e.message);
    ctx.log('error', `${what} failed: ${message}`);
    return { status: 'failed', error: message, result: { restored: false, ...(e.cause ? { error_cause: e.cause } : {}) } };
  } finally {
    await session?.close().catch(() => undefined);
  }
}
