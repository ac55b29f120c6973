import type { ConfigChange, DeviceSession, FetchedConfig, Transport } from '../drivers/types';
import { describeError, type JobContext, type JobResultOf } from './context';

/**
 * Deployment job kinds, run on the agent of the device's site.
 *
 * `deploy`: one session over the platform transport (gNMI or NETCONF): fetch the running config
 * (the pre-deployment backup, returned in the result so the controller stores it as a config
 * version), apply every service of the device as ONE change set (one SetRequest, or one
 * candidate commit), then read the running config again to verify the device took it.
 *
 * `rollback`: one session: put a backup back with replace semantics (used for the restore of an
 * atomic stack after a failure, and for POST /deployments/:id/rollback).
 */

export interface DeployParams {
  deployment_id: string;
  transport: 'gnmi' | 'netconf';
  changes: ConfigChange[];
  /** Read the running config after the push (default true). */
  verify?: boolean;
}

export interface DeployResult {
  /** The running config before anything changed; absent when it could not be read. */
  backup: FetchedConfig | null;
  /** True once the device accepted the change set. */
  applied: boolean;
  verified: boolean;
  /** Whether the running config differs from the backup after the push. */
  changed: boolean | null;
  /** DriverError cause when something failed (auth, timeout, refused, protocol, device). */
  error_cause?: string;
}

export interface RollbackParams {
  deployment_id: string;
  transport: 'gnmi' | 'netconf';
  backup: FetchedConfig;
  purpose: 'restore' | 'rollback';
}

function transportOf(params: Record<string, unknown>): Transport | null {
  return params.transport === 'gnmi' || params.transport === 'netconf' ? params.transport : null;
}

export async function runDeploy(ctx: JobContext): Promise<JobResultOf> {
  const params = ctx.params as unknown as DeployParams;
  const transport = transportOf(ctx.params);
  const changes = Array.isArray(params.changes) ? params.changes : [];
  if (!transport) return { status: 'failed', error: 'deploy job without a gnmi or netconf transport', result: null };
  // No session transcript: it would carry the whole config twice; the job's log lines say what happened.
  const result: DeployResult = { backup: null, applied: false, verified: false, changed: null };
  let session: DeviceSession | undefined;
  let step = 'connect';
  try {
    session = await ctx.open(transport);
    if (!session.apply) throw new Error(`the ${transport} driver cannot apply changes`);
    step = 'backup';
    result.backup = await session.fetchConfig();
    ctx.log('info', `backup: ${result.backup.text.length} bytes of ${result.backup.format} running config over ${transport}`);
    step = 'push';
    ctx.log('info', `pushing ${changes.length} service${changes.length === 1 ? '' : 's'} as one change set`);
    await session.apply(changes);
    result.applied = true;
    ctx.log('info', 'the device accepted the change set');
    if (params.verify !== false) {
      step = 'verify';
      const after = await session.fetchConfig();
      result.verified = true;
      result.changed = after.text !== result.backup.text;
      ctx.log('info', result.changed ? 'verified: the running config changed' : 'verified: the running config already matched (no change)');
    }
    return { status: 'succeeded', error: null, result: { ...result } };
  } catch (err) {
    const e = describeError(err, ctx.signal);
    const message = ctx.mask(e.message);
    if (e.cause) result.error_cause = e.cause;
    ctx.log('error', `${step} failed: ${message}`);
    // A failed verify still means the change went in: the job succeeded, unverified.
    if (result.applied) return { status: 'succeeded', error: null, result: { ...result } };
    return { status: 'failed', error: `${step} failed: ${message}`, result: { ...result } };
  } finally {
    await session?.close().catch(() => undefined);
  }
}

export async function runRollback(ctx: JobContext): Promise<JobResultOf> {
  const params = ctx.params as unknown as RollbackParams;
  const transport = transportOf(ctx.params);
  const backup = params.backup;
  if (!transport || !backup || typeof backup.text !== 'string') return { status: 'failed', error: 'rollback job without a transport and a backup', result: null };
  let session: DeviceSession | undefined;
  try {
    session = await ctx.open(transport);
    if (!session.restore) throw new Error(`the ${transport} driver cannot restore a configuration`);
    ctx.log('info', `${params.purpose === 'restore' ? 'restoring' : 'rolling back to'} the pre-deployment backup (${backup.text.length} bytes, replace)`);
    await session.restore(backup);
    const after = await session.fetchConfig();
    const matches = after.text === backup.text;
    ctx.log(matches ? 'info' : 'warn', matches ? 'the running config equals the backup' : 'the running config differs from the backup text after the restore');
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
