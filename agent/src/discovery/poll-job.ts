/**
 * The `poll` job kind: one session to the device, over gNMI when its profile's automation
 * transport is gnmi (or params.transport says so), else over the SSH CLI. The job succeeds
 * when at least one section was collected; every section reports its own outcome.
 */
import type { GnmiSession } from '../drivers/gnmi';
import type { DeviceSession } from '../drivers/types';
import { describeError, type JobContext, type JobResultOf } from '../jobs/context';
import { pollOverGnmi } from './gnmi-poll';
import { collected } from '../../../shared/src/discovery/records';
import type { PollResult } from '../../../shared/src/jobs/poll';
import { pollOverCli } from './ssh-poll';

export async function runPoll(ctx: JobContext<'poll'>): Promise<JobResultOf<'poll'>> {
  const transport = ctx.params.transport;
  let session: DeviceSession | undefined;
  try {
    // No transcript: a poll's result does not carry one (its sections say what was run and what failed).
    session = await ctx.open(transport);
    const opts = { signal: ctx.signal, mask: ctx.mask, log: (t: string) => ctx.log('info', t) };
    const polled =
      transport === 'gnmi'
        ? await pollOverGnmi(session as GnmiSession, opts)
        : await pollOverCli({ run: (c) => session!.run!(c) }, ctx.device.device_type, opts);
    const result: PollResult = { transport, ...polled };
    const collectedCount = polled.sections.filter(collected).length;
    const failed = polled.sections.filter((s) => s.status === 'failed');
    return {
      status: collectedCount > 0 ? 'succeeded' : 'failed',
      error: collectedCount > 0 ? null : failed.map((s) => `${s.name}: ${s.error}`).join('; ') || 'nothing was collected',
      result,
    };
  } catch (err) {
    const e = describeError(err, ctx.signal);
    const message = ctx.mask(e.message);
    ctx.log('warn', `poll over ${transport} failed: ${message}`);
    return { status: 'failed', error: message, result: { transport, sections: [], records: null, error_cause: e.cause ?? null } };
  } finally {
    await session?.close().catch(() => undefined);
  }
}
