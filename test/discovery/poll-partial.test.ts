import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSshDevice, type SimSshDevice } from '../sim/ssh';
import { registerSshCommand } from '../sim/ssh/cli';
import { clearSimNetwork } from '../sim/ssh/discovery-data';
import { SIM_TEXT_ONLY } from '../sim/ssh/discovery-json';
import { discoveryEnv, pollNow, simInventoryDevice, type DiscoveryEnv } from './helpers';

/**
 * What a poll stores and says when a device prints what the parsers do not fully understand,
 * through a real agent and SSH sessions to the simulator: the section is partial, the poll is
 * partial, poll-history keeps the count and the first lines not understood, and no record is
 * made up from them. And EOS read over `| json`, or over text when the release refuses it.
 */
const CORPUS = join(import.meta.dirname, '..', 'fixtures', 'discovery');
const capture = (path: string) => readFileSync(join(CORPUS, path), 'utf8');

let env: DiscoveryEnv;
let odd: SimSshDevice;
let eosJson: SimSshDevice;
let eosText: SimSshDevice;
let junos: SimSshDevice;
let junosText: SimSshDevice;
let undoCommands: (() => void)[] = [];

beforeAll(async () => {
  // A 'custom' device (IOS-like commands) whose MAC table is in a layout no parser knows and whose
  // LLDP detail names no local interfaces, with a summary table that accounts for only one neighbor.
  undoCommands = [
    registerSshCommand('custom', 'show mac address-table', () => capture('vendor_ios/show-mac-address-table/unknown-layout.txt')),
    registerSshCommand('custom', 'show lldp neighbors detail', () => capture('vendor_ios/show-lldp-neighbors-detail/ios-12.2-no-local-intf.txt')),
    registerSshCommand('custom', 'show lldp neighbors', () =>
      capture('vendor_ios/show-lldp-neighbors-detail/ios-12.2-no-local-intf.summary.txt')
        .split('\n')
        .filter((l) => !l.startsWith('SEP'))
        .join('\n'),
    ),
  ];
  clearSimNetwork();
  env = await discoveryEnv();
  odd = await startSshDevice({ dialect: 'custom', hostname: 'odd-1' });
  eosJson = await startSshDevice({ dialect: 'vendor_eos', hostname: 'eos-json-1' });
  eosText = await startSshDevice({ dialect: 'vendor_eos', hostname: 'eos-text-1' });
  junos = await startSshDevice({ dialect: 'vendor_junos', hostname: 'junos-json-1' });
  junosText = await startSshDevice({ dialect: 'vendor_junos', hostname: 'junos-text-1' });
  SIM_TEXT_ONLY.add('eos-text-1');
  SIM_TEXT_ONLY.add('junos-text-1');
});
afterAll(async () => {
  await env?.close();
  await Promise.all([odd?.close(), eosJson?.close(), eosText?.close(), junos?.close(), junosText?.close()]);
  SIM_TEXT_ONLY.clear();
  undoCommands.forEach((undo) => undo());
  clearSimNetwork();
});

describe('a poll of output the parsers do not fully understand', () => {
  it('is partial, keeps the lines it could not read and invents nothing', async () => {
    const id = (await simInventoryDevice(env.u, odd)).id;
    const poll = await pollNow(env.u, id);
    expect(poll.status).toBe('partial');
    const mac = poll.sections.find((s: any) => s.name === 'mac');
    expect(mac).toMatchObject({ status: 'partial', records: 0, skipped_lines: 2 });
    expect(mac.unparsed_lines).toEqual(['0011.2233.4455  Gi0/1         10    learn  12', '0011.2233.4466  Gi0/2         10    learn  30']);
    const lldp = poll.sections.find((s: any) => s.name === 'lldp');
    expect(lldp).toMatchObject({ status: 'partial', records: 1, skipped_lines: 1 });
    expect(lldp.unparsed_lines).toEqual(['neighbor SEP64167F2B6A41: no local interface printed']);
    expect(poll.error).toMatch(/mac: 2 line\(s\) of output not understood/);
    expect(poll.sections.find((s: any) => s.name === 'interfaces').status).toBe('ok');

    const history = await env.u.as('GET', `/api/devices/${id}/poll-history`);
    expect(history.body.polls[0]).toMatchObject({ id: poll.id, status: 'partial' });
    expect(history.body.polls[0].sections.find((s: any) => s.name === 'mac').unparsed_lines).toHaveLength(2);
    expect((await env.u.as('GET', `/api/devices/${id}/mac-table`)).body.total).toBe(0);
    const lldpNeighbors = (await env.u.as('GET', `/api/devices/${id}/neighbors?protocol=lldp`)).body.neighbors;
    expect(lldpNeighbors).toEqual([expect.objectContaining({ local_interface: 'Gi0/1', remote_name: 'bldg2-dist1.campus.example.org' })]);
  });
});

describe('EOS over a real SSH session', () => {
  it('reads every section from | json when the release answers it', async () => {
    const poll = await pollNow(env.u, (await simInventoryDevice(env.u, eosJson)).id);
    expect(poll.status).toBe('succeeded');
    const read = poll.sections.filter((s: any) => s.status !== 'unsupported');
    expect(read.map((s: any) => s.source)).toEqual([
      'show interfaces | json',
      'show lldp neighbors detail | json',
      'show ip arp | json',
      'show mac address-table | json',
      'show vlan | json',
    ]);
    expect(poll.counts.interfaces).toBeGreaterThan(0);
  });

  it('falls back to the text commands when the release refuses | json', async () => {
    const text = await pollNow(env.u, (await simInventoryDevice(env.u, eosText)).id);
    expect(text.status).toBe('succeeded');
    expect(text.sections.filter((s: any) => s.status !== 'unsupported').map((s: any) => s.source)).toEqual([
      'show interfaces',
      'show lldp neighbors detail',
      'show ip arp',
      'show mac address-table',
      'show vlan',
    ]);
    expect(text.sections.every((s: any) => s.status === 'ok' || s.status === 'unsupported')).toBe(true);
  });
});

describe('Junos over a real SSH session', () => {
  const commands = ['show interfaces', 'show lldp neighbors', 'show arp no-resolve', 'show vlans', 'show ethernet-switching table'];
  it('reads every section from | display json, and from text when the release refuses it', async () => {
    const structured = await pollNow(env.u, (await simInventoryDevice(env.u, junos)).id);
    const text = await pollNow(env.u, (await simInventoryDevice(env.u, junosText)).id);
    for (const poll of [structured, text]) expect(poll.status).toBe('succeeded');
    const sources = (poll: any) =>
      poll.sections
        .filter((s: any) => s.status !== 'unsupported')
        .map((s: any) => s.source)
        .sort();
    expect(sources(structured)).toEqual(commands.map((c) => `${c} | display json`).sort());
    expect(sources(text)).toEqual([...commands].sort());
    expect(structured.counts.mac).toBeGreaterThan(0);
  });
});
