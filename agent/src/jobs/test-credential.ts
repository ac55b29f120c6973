import type { DeviceSession, Transport } from '../drivers/types';
import { describeError, type JobContext, type JobResultOf } from './context';

/** `test_credential`: log in over the transport (params.transport, default ssh) and close again. */
export async function runTestCredential(ctx: JobContext): Promise<JobResultOf> {
  const asked = ctx.params.transport;
  const transport: Transport = asked === 'netconf' || asked === 'gnmi' ? asked : 'ssh';
  let session: DeviceSession | undefined;
  try {
    session = await ctx.open(transport);
    const message = `Logged in to ${ctx.device.name} (${ctx.device.host}) over ${transport} as ${ctx.device.username}`;
    return { status: 'succeeded', error: null, result: { ok: true, message } };
  } catch (err) {
    const e = describeError(err, ctx.signal);
    const message = ctx.mask(e.message);
    return { status: 'failed', error: message, result: { ok: false, message, ...(e.cause ? { error_cause: e.cause } : {}) } };
  } finally {
    await session?.close().catch(() => undefined);
  }
}
