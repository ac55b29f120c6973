import { createHash } from 'node:crypto';
import type { BackupMethod } from '../../../shared/src/device/backup-method';
import type { ConfigFormat, StructuredTransport, Transport } from '../../../shared/src/device/values';

/**
 * The 'backup' job as config backups submit it and read its outcome (the contract is
 * shared/src/jobs/backup.ts). The agent's backup runner opens one session per method, fetches
 * the running config and reports each method on its own.
 */

/** What a method goes over, and the format it yields: cli → ssh/cli, structured → netconf/xml or gnmi/json. */
export function channelOf(method: BackupMethod, transport: StructuredTransport | null): { via: Transport | 'none'; format: ConfigFormat | 'none' } {
  if (method === 'cli') return { via: 'ssh', format: 'cli' };
  if (transport === 'netconf') return { via: 'netconf', format: 'xml' };
  if (transport === 'gnmi') return { via: 'gnmi', format: 'json' };
  return { via: 'none', format: 'none' };
}

/**
 * What a backup job keeps on its job row once its versions are stored: per method the outcome
 * (format, size, error and its cause), not the config text and transcript a second time.
 */
export function backupResultSummary(result: Record<string, unknown>): Record<string, unknown> {
  const results = Array.isArray(result.results) ? result.results : [];
  return {
    results: results.map((item) => {
      if (!item || typeof item !== 'object') return item;
      const { config, ...rest } = item as Record<string, unknown> & { config?: unknown };
      return config && typeof config === 'object' ? { ...rest, config: configSummary(config as Record<string, unknown>) } : rest;
    }),
  };
}

/** A fetched config as a job row keeps it once the config is stored: its size instead of its text. */
export function configSummary(config: { text?: unknown } & Record<string, unknown>): Record<string, unknown> {
  const { text, ...meta } = config;
  return { ...meta, size_bytes: typeof text === 'string' ? Buffer.byteLength(text, 'utf8') : null };
}

/** The columns of a successfully fetched config as a stored version (everything but whose and where from). */
export function successfulVersion(config: { text: string; format: string; via: string }) {
  return {
    config_format: config.format,
    pulled_via: config.via,
    status: 'success' as const,
    error_message: null,
    config_text: config.text,
    config_hash: sha256(config.text),
    size_bytes: Buffer.byteLength(config.text, 'utf8'),
    line_count: lineCount(config.text),
  };
}

export const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** Lines of a config: a trailing newline does not start another line. */
export function lineCount(text: string): number {
  if (text === '') return 0;
  const lines = text.split('\n').length;
  return text.endsWith('\n') ? lines - 1 : lines;
}
