import type { DeviceSession, Transport } from '../drivers/types';
import type { TransportCheck } from '../../../shared/src/jobs/test-credential';
import { describeError, type JobContext, type JobResultOf } from './context';

/**
 * The transports a device is reached over: its profile's automation transport (gNMI or NETCONF)
 * first, then the SSH CLI. params.transport narrows the test to one.
 */
export function transportsToTest(ctx: Pick<JobContext<'test_credential'>, 'params' | 'device'>): Transport[] {
  const asked = ctx.params.transport;
  if (asked) return [asked];
  const automation = ctx.device.automation_transport;
  return automation ? [automation, 'ssh'] : ['ssh'];
}

/** Causes that say nothing answers on the port, as opposed to a login that was refused. */
const NOT_LISTENING = new Set(['refused', 'timeout']);

async function check(ctx: JobContext, transport: Transport): Promise<TransportCheck> {
  let session: DeviceSession | undefined;
  try {
    session = await ctx.open(transport);
    return { transport, status: 'ok', message: `Logged in to ${ctx.device.name} (${ctx.device.host}) over ${transport} as ${ctx.device.username}` };
  } catch (err) {
    const e = describeError(err, ctx.signal);
    return { transport, status: 'failed', message: ctx.mask(e.message), ...(e.cause ? { error_cause: e.cause } : {}) };
  } finally {
    await session?.close().catch(() => undefined);
  }
}

/**
 * `test_credential`: log in over each transport the device uses and close again. The credentials
 * pass when every transport tested logs in, except that SSH on a device with an automation
 * transport may simply not be offered (nothing listening: reported unavailable, not failed); a
 * gNMI-only or NETCONF-only device is judged by its automation transport.
 */
export async function runTestCredential(ctx: JobContext<'test_credential'>): Promise<JobResultOf<'test_credential'>> {
  const wanted = transportsToTest(ctx);
  const checks: TransportCheck[] = [];
  for (const transport of wanted) {
    const c = await check(ctx, transport);
    const optionalSsh = transport === 'ssh' && wanted.length > 1;
    checks.push(optionalSsh && c.status === 'failed' && NOT_LISTENING.has(c.error_cause ?? '') ? { ...c, status: 'unavailable' } : c);
  }
  const failed = checks.filter((c) => c.status === 'failed');
  const ok = failed.length === 0 && checks.some((c) => c.status === 'ok');
  const message = ok
    ? checks
        .filter((c) => c.status === 'ok')
        .map((c) => c.message)
        .join('; ')
    : failed.map((c) => `${c.transport} failed: ${c.message}`).join('; ');
  const cause = failed[0]?.error_cause;
  return {
    status: ok ? 'succeeded' : 'failed',
    error: ok ? null : message,
    result: { ok, message, transports: checks, ...(cause ? { error_cause: cause } : {}) },
  };
}
