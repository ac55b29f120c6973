/**
 * `npm run sim` with no --kind: a lab of every transport we support, one loopback address per
 * device and one port per transport, so one connection profile reaches them all:
 * an SSH CLI device of each dialect, a NETCONF device and a gNMI target.
 */
import type { SimDevice, SimKind, SimStartOptions } from '../main';
import { loopbackAddress } from '../loopback';
import { startSshDevice } from '../ssh/device';
import { registerSimNetwork, simOpenconfigTree } from '../ssh/discovery-data';
import { PERSONAS } from '../ssh/personas';
import { startNetconfDevice } from '../netconf/device';
import { startGnmiTarget } from '../gnmi/target';

export const LAB_PORTS = { ssh: 10022, netconf: 10830, gnmi: 19339 };

/** Every SSH dialect but `custom`, which is `generic` under another name. */
const SSH_DIALECTS = Object.keys(PERSONAS).filter((t) => t !== 'custom');

const shortName = (deviceType: string) => deviceType.replace(/^vendor_/, '');

function netconfConfig(hostname: string): string {
  return (
    `<system xmlns="urn:switchboard:sim"><hostname>${hostname}</hostname><domain-name>lab.example.net</domain-name></system>` +
    `<interfaces xmlns="urn:switchboard:sim"><interface><name>eth0</name><mtu>1500</mtu><description>uplink</description></interface></interfaces>`
  );
}

function gnmiTree(hostname: string) {
  return { ...simOpenconfigTree(hostname), system: { config: { hostname, 'domain-name': 'lab.example.net' } } };
}

/** Parses a device's new configuration, answering a message a person can act on when it does not parse. */
function parsedJson(text: string): object {
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === 'object' && !Array.isArray(value)) return value;
  } catch {
    /* answered below */
  }
  throw new Error('a gNMI device takes its configuration as one JSON object (the tree GET answers)');
}

export const labSimKind: SimKind = {
  description: 'every transport: an SSH CLI device per dialect, a NETCONF device and a gNMI target',
  deviceTypes: SSH_DIALECTS,
  defaultDeviceType: SSH_DIALECTS.join(','),
  async start(o: SimStartOptions) {
    const ports = { ...LAB_PORTS, ...o.ports };
    const login = { username: o.username, password: o.password };
    const devices: SimDevice[] = [];
    const closers: (() => Promise<void>)[] = [];
    let address = o.firstAddress ?? 0;
    const next = () => loopbackAddress(address++);
    try {
      for (const dialect of o.deviceTypes) {
        for (let i = 1; i <= o.devices; i++) {
          const name = `${o.namePrefix}-${shortName(dialect)}-${i}`;
          const d = await startSshDevice({ ...login, enablePassword: o.enablePassword, dialect, hostname: name, host: next(), port: ports.ssh });
          closers.push(d.close);
          devices.push({ name, host: d.host, port: d.port, device_type: dialect, transport: 'ssh', config: d.config, setConfig: d.setConfig });
        }
      }
      registerSimNetwork(devices.map((d) => ({ hostname: d.name, deviceType: d.device_type, address: d.host })));
      for (let i = 1; i <= o.devices; i++) {
        const name = `${o.namePrefix}-netconf-${i}`;
        const d = await startNetconfDevice({ ...login, host: next(), port: ports.netconf, initialConfig: netconfConfig(name) });
        closers.push(d.close);
        devices.push({ name, host: d.host, port: d.port, device_type: 'generic', transport: 'netconf', config: d.running, setConfig: d.setRunning });
      }
      for (let i = 1; i <= o.devices; i++) {
        const name = `${o.namePrefix}-gnmi-${i}`;
        const t = await startGnmiTarget({ ...login, host: next(), port: ports.gnmi, initialTree: gnmiTree(name) });
        closers.push(t.close);
        devices.push({
          name,
          host: t.host,
          port: t.port,
          device_type: 'generic',
          transport: 'gnmi',
          config: () => JSON.stringify(t.tree(), null, 2) + '\n',
          setConfig: (text) => t.setTree(parsedJson(text) as never),
        });
      }
    } catch (e) {
      await Promise.all(closers.map((c) => c()));
      throw e;
    }
    return { devices, close: async () => void (await Promise.all(closers.map((c) => c()))) };
  },
};
