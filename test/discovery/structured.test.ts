import { describe, expect, it } from 'vitest';
import { discoveryDialect } from '../../agent/src/discovery/dialects';
import { SECTIONS } from '../../shared/src/discovery/records';
import { pollOverCli, type CliRunner } from '../../agent/src/discovery/ssh-poll';
import { DriverError } from '../../agent/src/drivers/types';
import { matchCommand } from '../sim/ssh/cli';
import { SIM_DISCOVERY_COMMANDS, simModel } from '../sim/ssh/discovery-data';
import { SIM_JSON_COMMANDS } from '../sim/ssh/discovery-json';

/**
 * EOS, NX-OS and Junos: the poll reads each section from `<command> | json` (Junos
 * `| display json`) when the device answers
 * with JSON, and from the text command when it refuses `| json` (an older release) or prints
 * text; both paths give the same records from the same simulated device.
 */
const STRUCTURED = ['vendor_eos', 'vendor_nxos', 'vendor_junos'];

function simSession(dialect: string, hostname: string, withJson: boolean): CliRunner & { ran: string[] } {
  const commands = { ...SIM_DISCOVERY_COMMANDS[dialect], ...(withJson ? SIM_JSON_COMMANDS[dialect] : {}) };
  const model = simModel(hostname, dialect);
  const ran: string[] = [];
  return {
    ran,
    run: async (command: string) => {
      ran.push(command);
      const m = matchCommand(command, Object.keys(commands));
      if (!m || m === 'ambiguous' || (!withJson && command.endsWith(' json')))
        throw new DriverError('device', `the device rejected '${command}': % Invalid input`);
      return commands[m.key](model);
    },
  };
}

/** Records in a comparable order. */
const sorted = <T>(list: T[]) => [...list].map((r) => JSON.stringify(r)).sort();

describe('structured output first, text as the fallback', () => {
  for (const dialect of STRUCTURED) {
    it(`${dialect}: every section comes from | json when the device answers it`, async () => {
      const session = simSession(dialect, 'sim-7', true);
      const { sections } = await pollOverCli(session, dialect);
      for (const s of sections.filter((x) => x.status !== 'unsupported')) {
        expect(s.source, s.name).toBe(discoveryDialect(dialect)[s.name]!.structured!.command);
        expect(s.status, s.name).toBe('ok');
        expect(s.records, s.name).toBeGreaterThan(0);
      }
      expect(session.ran.every((c) => c.endsWith(' json'))).toBe(true);
    });

    it(`${dialect}: a device refusing | json is read from text, section by section, to the same records`, async () => {
      const text = await pollOverCli(simSession(dialect, 'sim-7', false), dialect);
      const structured = await pollOverCli(simSession(dialect, 'sim-7', true), dialect);
      for (const s of text.sections.filter((x) => x.status !== 'unsupported')) {
        expect(s.source, s.name).toBe(discoveryDialect(dialect)[s.name]!.command);
        expect(s.status, s.name).toBe('ok');
      }
      const model = simModel('sim-7', dialect);
      for (const records of [text.records, structured.records]) {
        expect(records.interfaces.map((i) => [i.name, i.admin_status, i.oper_status, i.mac_address])).toEqual(
          expect.arrayContaining(model.ports.map((p) => [p.name, p.admin ? 'up' : 'down', p.admin && p.oper ? 'up' : 'down', p.mac])),
        );
        expect(sorted(records.arp.map((a) => a.mac_address))).toEqual(sorted(model.arp.map((a) => a.mac)));
        expect(records.vlans.map((v) => v.vlan_id)).toEqual(model.vlans.map((v) => v.id));
      }
      expect(sorted(structured.records.neighbors.map((n) => [n.protocol, n.remote_name, n.remote_address, n.remote_interface]))).toEqual(
        sorted(text.records.neighbors.map((n) => [n.protocol, n.remote_name, n.remote_address, n.remote_interface])),
      );
      expect(sorted(structured.records.mac.map((e) => [e.mac_address, e.vlan, e.entry_type]))).toEqual(
        expect.arrayContaining(sorted(text.records.mac.filter((e) => e.vlan !== null).map((e) => [e.mac_address, e.vlan, e.entry_type]))),
      );
    });
  }

  it('a dialect without structured forms never asks for them', async () => {
    const session = simSession('vendor_ios', 'sim-7', true);
    await pollOverCli(session, 'vendor_ios');
    expect(session.ran.some((c) => c.endsWith(' json'))).toBe(false);
    expect(SECTIONS.filter((s) => discoveryDialect('vendor_ios')[s]?.structured)).toEqual([]);
  });
});
