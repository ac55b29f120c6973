import type { BackupMethodResult } from '../../../shared/src/device/backup-method';
import { configPlaceholder } from '../../../shared/src/jobs/transcript';
import type { DeviceSession, Transport } from '../drivers/types';
import { TextTranscript, describeError, type JobContext, type JobResultOf } from './context';

/**
 * `backup`: the running configuration by each method asked for, one session per method, so a
 * failed structured pull never hides a good CLI one. cli goes over the SSH driver; structured
 * over the profile's automation transport (params.structured_transport, else the device's).
 */
export async function runBackup(ctx: JobContext<'backup'>): Promise<JobResultOf<'backup'>> {
  const transcript = new TextTranscript();
  const results: BackupMethodResult[] = [];
  for (const method of new Set(ctx.params.methods)) {
    const structured = ctx.params.structured_transport ?? ctx.device.automation_transport;
    const transport: Transport | null = method === 'cli' ? 'ssh' : structured === 'gnmi' || structured === 'netconf' ? structured : null;
    if (!transport) {
      results.push({
        method,
        error: 'no automation transport: set automation_transport (gnmi or netconf) on the connection profile',
        error_cause: 'protocol',
      });
      continue;
    }
    transcript.write('info', `${method} backup of ${ctx.device.name} over ${transport}`);
    let session: DeviceSession | undefined;
    try {
      session = await ctx.open(transport, transcript);
      const mark = transcript.mark();
      const config = await session.fetchConfig();
      // The result carries the config once: the controller puts it back in the transcript.
      transcript.elideReceived(mark, configPlaceholder(method));
      results.push({ method, config });
      ctx.log('info', `${method}: fetched ${config.text.length} bytes of ${config.format} config`);
    } catch (err) {
      const e = describeError(err, ctx.signal);
      results.push({ method, error: ctx.mask(e.message), ...(e.cause ? { error_cause: e.cause } : {}) });
      transcript.write('info', `${method} backup failed: ${e.message}`);
      ctx.log('warn', `${method}: ${ctx.mask(e.message)}`);
    } finally {
      await session?.close().catch(() => undefined);
    }
    if (ctx.signal.aborted) break;
  }
  const ok = results.some((r) => r.config);
  return {
    status: ok ? 'succeeded' : 'failed',
    error: ok ? null : results.map((r) => `${r.method}: ${r.error}`).join('; '),
    result: { results, transcript: ctx.mask(transcript.text()) },
  };
}
