/** The SSH CLI simulator as a `npm run sim` kind. */
import type { SimKind } from '../main';
import { startSshFleet } from './device';
import { registerSimNetwork } from './discovery-data';
import { PERSONAS } from './personas';

export const sshSimKind: SimKind = {
  description: 'SSH CLI devices (any dialect)',
  deviceTypes: Object.keys(PERSONAS),
  defaultDeviceType: 'vendor_ios',
  async start(o) {
    const fleet = await startSshFleet(o.devices, {
      dialects: o.deviceTypes,
      basePort: o.basePort,
      spreadHosts: o.spreadHosts,
      host: o.host,
      hostnamePrefix: o.namePrefix,
      username: o.username,
      password: o.password,
      enablePassword: o.enablePassword,
    });
    registerSimNetwork(fleet.devices.map((d) => ({ hostname: d.hostname, deviceType: d.deviceType, address: d.host })));
    return {
      devices: fleet.devices.map((d) => ({
        name: d.hostname,
        host: d.host,
        port: d.port,
        device_type: d.deviceType,
        transport: 'ssh' as const,
        config: d.config,
        setConfig: d.setConfig,
      })),
      close: fleet.close,
    };
  },
};
