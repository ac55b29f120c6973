/** DeviceTarget for a simulated device, for tests and benchmarks that drive it with a driver. */
import type { DeviceCredentials, DeviceTarget } from '../../../agent/src/drivers/types';
import type { SimSshDevice } from './device';

export function sshTarget(dev: SimSshDevice, credentials: DeviceCredentials, over: Partial<DeviceTarget> = {}): DeviceTarget {
  return {
    id: `sim-${dev.host}-${dev.port}`,
    name: dev.hostname,
    host: dev.host,
    device_type: dev.deviceType,
    credentials,
    ports: { ssh: dev.port, netconf: 830, gnmi: 9339 },
    gnmi_tls: false,
    gnmi_skip_verify: false,
    ...over,
  };
}
