/** One section's output text → records, through the device_type's discovery dialect. */
import { buildArp, buildInterface, buildMac, buildNeighbor, buildVlan, parseRecords, type Builder, type ParseOutcome } from './engine';
import { discoveryDialect, type SectionSpec } from './dialects';
import type { DiscoveryRecords, SectionName } from '../../../shared/src/discovery/records';

type RecordOf<S extends SectionName> = S extends 'interfaces'
  ? DiscoveryRecords['interfaces'][number]
  : S extends 'cdp' | 'lldp'
    ? DiscoveryRecords['neighbors'][number]
    : S extends 'arp'
      ? DiscoveryRecords['arp'][number]
      : S extends 'mac'
        ? DiscoveryRecords['mac'][number]
        : DiscoveryRecords['vlans'][number];

function builderOf(section: SectionName, vlanIds?: ReadonlyMap<string, number>): Builder<unknown> {
  switch (section) {
    case 'interfaces':
      return buildInterface;
    case 'cdp':
      return buildNeighbor('cdp');
    case 'lldp':
      return buildNeighbor('lldp');
    case 'arp':
      return buildArp;
    case 'mac':
      return buildMac(vlanIds);
    case 'vlans':
      return buildVlan;
  }
}

export function parseWith<S extends SectionName>(
  section: S,
  spec: SectionSpec,
  text: string,
  vlanIds?: ReadonlyMap<string, number>,
): ParseOutcome<RecordOf<S>> {
  return parseRecords(text, spec.parse, builderOf(section, vlanIds)) as ParseOutcome<RecordOf<S>>;
}

/** Parses one section's output as the given device_type prints it; throws for a section the dialect does not have. */
export function parseSection<S extends SectionName>(
  deviceType: string,
  section: S,
  text: string,
  vlanIds?: ReadonlyMap<string, number>,
): ParseOutcome<RecordOf<S>> {
  const spec = discoveryDialect(deviceType)[section];
  if (!spec) throw new Error(`${deviceType} has no ${section} table`);
  return parseWith(section, spec, text, vlanIds);
}
