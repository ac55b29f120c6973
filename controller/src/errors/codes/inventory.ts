import type { ErrorSpec } from '../spec';

/** Connection profiles, devices, sites, imports, bulk edit and NetBox sources. */
export const inventoryErrors = {
  DEVICE_NOT_FOUND: { status: 404, message: 'Device not found', doc: "No device with that id in the caller's organization." },
  DEVICE_NAME_TAKEN: { status: 409, message: 'Device with this name already exists', doc: 'Device names are unique within an organization.' },
  DEVICE_IN_USE: {
    status: 409,
    message: 'Device is still referenced by other records (such as running deployments) and cannot be deleted',
    doc: 'Another area keeps rows that must not lose their device; finish or remove them first.',
  },
  INVALID_HOST: {
    status: 400,
    message: 'host must be an IP address or a hostname',
    doc: 'A device host is an IPv4/IPv6 address or an RFC 1123 hostname.',
  },
  INVALID_DEVICE_TYPE: {
    status: 400,
    message: 'Unknown device_type',
    doc: 'device_type is one of vendor_ios, vendor_nxos, vendor_xe, vendor_xr, vendor_junos, vendor_eos, vendor_panos, vendor_fw, generic, custom, snmp.',
  },
  INVALID_SOURCE: {
    status: 400,
    message: 'source netbox is set only by a NetBox sync',
    doc: 'Devices marked source netbox come from a NetBox source sync, not from create.',
  },
  UNKNOWN_PROFILE: {
    status: 400,
    message: 'profile_id is not a connection profile of your organization',
    doc: "A body or query names a connection profile that does not exist in the caller's organization.",
  },
  UNKNOWN_SITE: {
    status: 400,
    message: 'site_id is not a site of your organization',
    doc: "A body names a site that does not exist in the caller's organization.",
  },

  PROFILE_NOT_FOUND: {
    status: 404,
    message: 'Connection profile not found',
    doc: "No connection profile with that id in the caller's organization.",
  },
  PROFILE_NAME_TAKEN: {
    status: 409,
    message: 'Connection profile with this name already exists',
    doc: 'Profile names are unique within an organization.',
  },
  PROFILE_INVALID_CA_CERTIFICATE: {
    status: 400,
    message: 'ca_certificate is not a PEM CA certificate',
    doc:
      "ca_certificate takes one or more PEM CA certificates (the CA that signed the devices' TLS certificates); the message says which " +
      'one could not be read.',
  },
  PROFILE_INVALID_NETWORK: {
    status: 400,
    message: 'allowed_networks holds an entry that is not an IPv4 or IPv6 network',
    doc:
      'allowed_networks takes CIDRs such as 10.20.0.0/16 or 2001:db8::/32 (a bare address is a /32 or /128); the message names the entry. ' +
      'Entries are stored normalized (host bits cleared, IPv6 compressed).',
  },
  HOST_OUTSIDE_PROFILE_NETWORKS: {
    status: 400,
    message: "The device's host is outside the networks its connection profile allows its credentials to be sent to",
    doc:
      'A device create, update, bulk edit or profile assignment would give a device whose host is an IP address a connection profile whose ' +
      'allowed_networks do not contain it; the message names the device, the profile and its networks. (Import reports such rows as failed ' +
      'rows, and a NetBox sync such devices as errors of its run: not created, or not updated.) ' +
      'A host that is a DNS name is checked by the agent, on the addresses it resolves to, before any session.',
  },
  PROFILE_IN_USE: {
    status: 409,
    message: 'Connection profile is still used by devices',
    doc: 'Move its devices to another profile (POST /api/profiles/assign) before deleting it; the message says how many.',
  },

  SITE_NOT_FOUND: { status: 404, message: 'Site not found', doc: "No site with that id in the caller's organization." },
  SITE_NAME_TAKEN: { status: 409, message: 'Site with this name already exists', doc: 'Site names are unique within an organization.' },
  SITE_INVALID_PARENT: {
    status: 400,
    message: 'parent_site_id is not a valid parent',
    doc: "The parent is not a site of the caller's organization, or the change would make a site its own ancestor.",
  },
  SITE_IN_USE: {
    status: 409,
    message: 'Site still has devices or child sites',
    doc: 'Move or delete its devices and child sites first; the message says how many.',
  },

  IMPORT_NO_PROFILE: {
    status: 400,
    message: 'No connection profile for the import: pass profile_id or set devices.default_profile_id',
    doc: 'Imports use the profile_id query value, else the default connection profile setting.',
  },
  IMPORT_MISSING_COLUMNS: {
    status: 400,
    message: 'CSV header is missing required columns',
    doc: 'The CSV header needs name, host and device_type; the message names the missing ones.',
  },
  IMPORT_EMPTY: {
    status: 400,
    message: 'The import file is empty: expected a header line with name, host, device_type',
    doc: 'A CSV import body with no header line.',
  },
  IMPORT_TOO_MANY_ROWS: {
    status: 413,
    message: 'The import has too many rows',
    doc:
      'A CSV import has more than 50,000 rows or 1,000,000 fields (max_rows, max_fields); split the file. ' +
      'A JSON import of more than 50,000 rows is a 400 from its schema.',
  },
  IMPORT_INVALID_CSV: {
    status: 400,
    message: 'CSV could not be parsed',
    doc: 'The CSV text is malformed (for example an unclosed quote); the message gives the line.',
  },

  BULK_EMPTY_IDS: { status: 400, message: 'ids must list at least one device', doc: 'PATCH /api/devices/bulk with an empty ids array.' },
  BULK_EMPTY_FIELDS: { status: 400, message: 'fields must set at least one field', doc: 'PATCH /api/devices/bulk with an empty fields object.' },

  NETBOX_SOURCE_NOT_FOUND: { status: 404, message: 'NetBox source not found', doc: "No NetBox source with that id in the caller's organization." },
  NETBOX_SOURCE_NAME_TAKEN: {
    status: 409,
    message: 'NetBox source with this name already exists',
    doc: 'NetBox source names are unique within an organization.',
  },
  NETBOX_INVALID_URL: {
    status: 400,
    message: 'url must be an http or https URL',
    doc: 'The NetBox base URL, such as https://netbox.example.com (no user:password part: the token authenticates).',
  },
  NETBOX_URL_NOT_ALLOWED: {
    status: 400,
    message: 'The NetBox URL is not allowed',
    doc:
      "The url resolves to an address NetBox sources may not reach (loopback, link-local, the controller's own port, or a host missing " +
      'from the setting netbox.allowed_hosts), or does not resolve; the message says which.',
  },
  NETBOX_INVALID_SETTING: {
    status: 400,
    message: 'Invalid NetBox source setting',
    doc: 'default_device_type or a platform_map value is not a device_type, or a device filter is not usable; the message names it.',
  },
} satisfies Record<string, ErrorSpec>;
