import type { ErrorSpec } from '../spec';

/** Discovery (polls, records, topology). */
export const discoveryErrors = {
  DISCOVERY_UNSUPPORTED_DEVICE: {
    status: 400,
    message: 'Devices of type snmp cannot be polled: discovery needs SSH CLI or gNMI access',
    doc: 'POST /api/devices/:id/poll on a device whose device_type has no CLI; change the device_type or use a profile with automation_transport gnmi.',
  },
} satisfies Record<string, ErrorSpec>;
