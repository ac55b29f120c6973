/**
 * A poll over SSH: the dialect's show commands in one session, each parsed into records.
 * A command the device rejects fails its section only; a lost session fails the sections
 * not yet run. VLANs are read before the MAC table so VLAN names there can become ids.
 */
import { DriverError } from '../drivers/types';
import { discoveryDialect, type SectionSpec } from './dialects';
import { SAMPLE_LINES, type ParseOutcome } from './engine';
import { fillLocalInterfaces, lacksLocal } from './local-interfaces';
import { parseJsonOutput } from './structured';
import { parseWith } from './parse';
import {
  emptyRecords,
  SECTION_RECORDS,
  type DiscoveryRecords,
  type NeighborRecord,
  type SectionName,
  type SectionResult,
} from '../../../shared/src/discovery/records';

export interface CliRunner {
  run(command: string): Promise<string>;
}

const ORDER: SectionName[] = ['interfaces', 'cdp', 'lldp', 'arp', 'vlans', 'mac'];

/**
 * One section: its structured form when the dialect has one and the device answers it with JSON,
 * else its text form. A refused `| json` (older releases, commands without JSON) falls back;
 * a lost session does not.
 */
async function readSection(
  session: CliRunner,
  name: SectionName,
  spec: SectionSpec,
  vlanIds?: ReadonlyMap<string, number>,
): Promise<{ parsed: ParseOutcome<unknown>; source: string }> {
  if (spec.structured) {
    const json = await session.run(spec.structured.command).then(parseJsonOutput, (err: unknown) => {
      if (err instanceof DriverError && err.kind === 'device') return null;
      throw err;
    });
    if (json !== null) return { parsed: spec.structured.read(json, vlanIds), source: spec.structured.command };
  }
  const text = await session.run(spec.command);
  return { parsed: await completeNeighbors(session, spec, parseWith(name, spec, text, vlanIds)), source: spec.command };
}

/**
 * Neighbors printed without their local interface get it from the dialect's summary table; any
 * still without one is dropped and counted as not understood, never stored half-known.
 */
async function completeNeighbors<T>(session: CliRunner, spec: SectionSpec, parsed: ParseOutcome<T>): Promise<ParseOutcome<T>> {
  const neighbors = parsed.records as unknown as NeighborRecord[];
  if (!neighbors.some((n) => typeof n === 'object' && lacksLocal(n))) return parsed;
  if (spec.localInterfaces) {
    const summary = await session.run(spec.localInterfaces.command).catch(() => '');
    fillLocalInterfaces(neighbors, summary, spec.localInterfaces.parse);
  }
  const lost = neighbors.filter(lacksLocal);
  return {
    records: neighbors.filter((n) => !lacksLocal(n)) as unknown as T[],
    skipped: parsed.skipped + lost.length,
    samples: [...parsed.samples, ...lost.map((n) => `neighbor ${n.remote_name}: no local interface printed`)].slice(0, SAMPLE_LINES),
  };
}

/** A parsed section: partial, with the lines not understood, whenever output was left over. */
export function parsedSection(
  name: SectionName,
  source: string,
  parsed: ParseOutcome<unknown>,
  mask: (text: string) => string = (t) => t,
): SectionResult {
  const whole = parsed.skipped === 0;
  return {
    name,
    status: whole ? 'ok' : 'partial',
    source,
    records: parsed.records.length,
    error: whole ? null : `${parsed.skipped} line(s) of output not understood; records may be missing`,
    skipped_lines: parsed.skipped,
    unparsed_lines: parsed.samples.map(mask),
  };
}

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
      const vlanIds = name === 'mac' ? new Map(records.vlans.map((v) => [v.name, v.vlan_id])) : undefined;
      const { parsed, source } = await readSection(session, name, spec, vlanIds);
      (records[SECTION_RECORDS[name]] as unknown[]).push(...parsed.records);
      sections.push(parsedSection(name, source, parsed, mask));
      opts.log?.(`${name}: ${parsed.records.length} record(s) from '${source}'${parsed.skipped ? `, ${parsed.skipped} line(s) not understood` : ''}`);
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
