/**
 * The device types the API accepts (controller/src/devices/rules.ts DEVICE_TYPES, which the console
 * cannot import: it talks to the controller through the API only); test/console/logic.test.ts keeps
 * the two lists equal. A device of a type missing here would show an empty type in its edit form.
 */
export const DEVICE_TYPES = [
  'vendor_ios',
  'vendor_nxos',
  'vendor_xe',
  'vendor_xr',
  'vendor_junos',
  'vendor_eos',
  'vendor_panos',
  'vendor_fw',
  'generic',
  'custom',
  'snmp',
];
