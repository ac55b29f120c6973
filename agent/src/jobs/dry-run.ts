import type { DryRunExactness, DryRunParams, DryRunResult } from '../../../shared/src/jobs/deploy';
import type { JobDevice } from '../../../shared/src/jobs/messages';
import { unifiedDiff } from '../../../shared/src/diff/unified';
import type { ConfigChange, ConfigPreview, DeviceSession } from '../drivers/types';
import { cliLines } from '../drivers/ssh/config-lines';
import { applyCliLines, approximateSetLines } from './cli-preview';
import { applyJunosSetLines } from './junos-preview';
import { describeError, type JobContext, type JobResultOf } from './context';

/**
 * `dry_run`: what a deployment would change on one device, without changing it. NETCONF edits
 * the candidate and discards it; gNMI applies the Set to the fetched JSON locally; CLI types the
 * lines into a model of the running config (cli-preview.ts). No backup is taken or stored.
 */

const SET_DIALECTS = /junos|panos|pan-os|palo/i;

async function cliPreview(session: DeviceSession, device: JobDevice, changes: ConfigChange[]): Promise<ConfigPreview> {
  const deviceType = device.device_type;
  // What the push would refuse before typing anything (a `?` in a line), the dry run refuses too.
  cliLines(changes, device.name);
  const running = await session.fetchConfig();
  const braces = /^\S[^\n]*\{\s*$/m.test(running.text);
  const apply = !SET_DIALECTS.test(deviceType) ? applyCliLines : braces && /junos/i.test(deviceType) ? applyJunosSetLines : approximateSetLines;
  return { before: running.text, after: changes.reduce((text, c) => apply(text, c.config), running.text) };
}

const METHODS: Record<DryRunParams['transport'], { exactness: DryRunExactness; method: string }> = {
  netconf: { exactness: 'device', method: 'edited the candidate datastore, read it back against running, then discarded it' },
  gnmi: { exactness: 'local', method: 'applied the Set (deletes, replaces, updates) to the JSON of a Get, on the agent' },
  ssh: { exactness: 'approximate', method: 'typed the CLI lines into a model of the running config, on the agent' },
};

export async function runDryRun(ctx: JobContext<'dry_run'>): Promise<JobResultOf<'dry_run'>> {
  const { transport, changes } = ctx.params;
  let session: DeviceSession | undefined;
  try {
    session = await ctx.open(transport);
    let preview: ConfigPreview;
    if (transport === 'ssh') preview = await cliPreview(session, ctx.device, changes);
    else if (session.preview) preview = await session.preview(changes);
    else throw new Error(`the ${transport} driver cannot compute a dry run`);
    const { diff, additions, deletions } = unifiedDiff(preview.before, preview.after);
    const result: DryRunResult = { diff, changed: diff !== '', additions, deletions, ...METHODS[transport] };
    ctx.log(
      'info',
      result.changed
        ? `dry run: ${additions} line(s) would be added, ${deletions} removed; nothing was changed`
        : 'dry run: the running config already matches; nothing was changed',
    );
    return { status: 'succeeded', error: null, result };
  } catch (err) {
    const message = ctx.mask(describeError(err, ctx.signal).message);
    ctx.log('error', `dry run failed: ${message}`);
    return { status: 'failed', error: `dry run failed: ${message}`, result: null };
  } finally {
    await session?.close().catch(() => undefined);
  }
}
