/**
 * A poll over SSH: the dialect's show commands in one session, each parsed into records.
 * A command the device rejects fails its section only; a lost session fails the sections
 * not yet run. VLANs are read before the MAC table so VLAN names there can become ids.
 */
import { DriverError } from '../drivers/types';
import { discoveryDialect } from './dialects';
import { parseWith } from './parse';
import { emptyRecords, SECTION_RECORDS, type DiscoveryRecords, type SectionName, type SectionResult } from './records';

export interface CliRunner {
  run(command: string): Promise<string>;
}

const ORDER: SectionName[] = ['interfaces', 'cdp', 'lldp', 'arp', 'vlans', 'mac'];

export async function pollOverCli(
  session: CliRunner,
  deviceType: string,
  opts: { signal?: AbortSignal; mask?: (text: string) => string; log?: (text: string) => void } = {},
): Promise<{ sections: SectionResult[]; records: DiscoveryRecords }> {
  const dialect = discoveryDialect(deviceType);
  const records = emptyRecords();
  const sections: SectionResult[] = [];
  const mask = opts.mask ?? ((t: string) => t);
  let broken: string | null = null;
  for (const name of ORDER) {
    const spec = dialect[name];
    if (!spec) {
      sections.push({ name, status: 'unsupported', source: null, records: 0, error: null, skipped_lines: 0 });
      continue;
    }
    if (broken || opts.signal?.aborted) {
      sections.push({ name, status: 'failed', source: spec.command, records: 0, error: broken ?? 'the job deadline passed', skipped_lines: 0 });
      continue;
    }
    try {
      const text = await session.run(spec.command);
      const vlanIds = name === 'mac' ? new Map(records.vlans.map((v) => [v.name, v.vlan_id])) : undefined;
      const parsed = parseWith(name, spec, text, vlanIds);
      (records[SECTION_RECORDS[name]] as unknown[]).push(...parsed.records);
      sections.push({ name, status: 'ok', source: spec.command, records: parsed.records.length, error: null, skipped_lines: parsed.skipped });
      opts.log?.(`${name}: ${parsed.records.length} record(s) from '${spec.command}'${parsed.skipped ? `, ${parsed.skipped} line(s) not understood` : ''}`);
    } catch (err) {
      const message = mask((err as Error).message ?? String(err));
      sections.push({ name, status: 'failed', source: spec.command, records: 0, error: message, skipped_lines: 0 });
      opts.log?.(`${name}: ${message}`);
      // Only a refused command leaves the session usable; anything else ends it.
      if (!(err instanceof DriverError && err.kind === 'device')) broken = `not run: the session ended earlier (${message})`;
    }
  }
  const order = (s: SectionResult) => ['interfaces', 'cdp', 'lldp', 'arp', 'mac', 'vlans'].indexOf(s.name);
  return { sections: sections.sort((a, b) => order(a) - order(b)), records };
}
