import { describe, expect, it } from 'vitest';
import { GNMI_PATHS, pollOverGnmi } from '../../agent/src/discovery/gnmi-poll';
import { simOpenconfigTree } from '../sim/ssh/discovery-data';

/**
 * A gNMI poll never says ok while dropping entries: a tree entry the mapping cannot make a record
 * of (an interface without a name, an FDB entry without a MAC) makes its section partial, with the
 * entry kept as the sample, and no record is made of it.
 */
const tree = () => JSON.parse(JSON.stringify(simOpenconfigTree('gnmi-partial-1'))) as Record<string, any>;
const getter = (t: Record<string, any>) => ({
  get: async (path: string) => {
    const key = {
      [GNMI_PATHS.interfaces]: 'openconfig-interfaces:interfaces',
      [GNMI_PATHS.lldp]: 'openconfig-lldp:lldp',
      [GNMI_PATHS.networkInstances]: 'openconfig-network-instance:network-instances',
    }[path]!;
    return { [key]: t[key] };
  },
});

describe('gNMI sections with entries that make no record', () => {
  it('a whole tree is ok everywhere', async () => {
    const { sections } = await pollOverGnmi(getter(tree()));
    expect(sections.filter((s) => s.name !== 'cdp').map((s) => s.status)).toEqual(['ok', 'ok', 'ok', 'ok', 'ok']);
  });

  it('an interface without a name and an FDB entry without a MAC make their sections partial', async () => {
    const t = tree();
    const intfs = t['openconfig-interfaces:interfaces'].interface;
    const whole = intfs.length;
    delete intfs[1].name;
    delete intfs[1].config.name;
    delete intfs[1].state.name;
    const fdb = t['openconfig-network-instance:network-instances']['network-instance'][0].fdb['mac-table'].entries.entry;
    const macs = fdb.length;
    delete fdb[0]['mac-address'];
    delete fdb[0].state['mac-address'];
    const { sections, records } = await pollOverGnmi(getter(t));
    const byName = Object.fromEntries(sections.map((s) => [s.name, s]));
    expect(byName.interfaces).toMatchObject({ status: 'partial', records: whole - 1, skipped_lines: 1 });
    expect(byName.interfaces.unparsed_lines![0]).toContain('"description"');
    expect(byName.mac).toMatchObject({ status: 'partial', records: macs - 1, skipped_lines: 1 });
    expect(byName.lldp.status).toBe('ok');
    expect(records.interfaces).toHaveLength(whole - 1);
    expect(records.mac).toHaveLength(macs - 1);
  });
});
