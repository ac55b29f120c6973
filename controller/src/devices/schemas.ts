import { Type } from '@sinclair/typebox';
import { MAX_IMPORT_ROWS } from '../http/body-limits';
import { Nullable, Paging, StringEnum, Timestamp, Uuid } from '../http/schemas';
import { DEVICE_SORTS, SORT_ORDERS } from './list-order';
import { DEVICE_TYPES } from './rules';

const Text = (maxLength: number) => Type.String({ maxLength });
const Name = Type.String({ minLength: 1, maxLength: 255 });
const Host = Type.String({ minLength: 1, maxLength: 253, description: 'IP address or hostname.' });
const DeviceType = Type.String({ minLength: 1, maxLength: 64, description: `One of ${DEVICE_TYPES.join(', ')}.` });
const Tags = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 100 });
const Metadata = Type.Record(Type.String(), Type.Unknown(), { description: 'Free-form object.' });
const PollInterval = Type.Integer({ minimum: 1, maximum: 10080 });
const Slug = Type.String({ minLength: 1, maxLength: 32, pattern: '^[a-z0-9_-]+$' });

/** Fields a person may set on a device (create and PUT). */
const editable = {
  name: Name,
  host: Host,
  device_type: DeviceType,
  profile_id: Uuid,
  protocol: Type.Optional(Slug),
  manufacturer: Type.Optional(Text(200)),
  model: Type.Optional(Text(200)),
  platform: Type.Optional(Text(200)),
  description: Type.Optional(Text(2000)),
  serial_number: Type.Optional(Text(200)),
  asset_tag: Type.Optional(Text(200)),
  site: Type.Optional(Text(200)),
  site_id: Type.Optional(Nullable(Uuid)),
  tags: Type.Optional(Tags),
  metadata: Type.Optional(Metadata),
  poll_enabled: Type.Optional(Type.Boolean()),
  poll_interval_minutes: Type.Optional(Nullable(PollInterval)),
};

export const DeviceBody = Type.Object(
  { ...editable, source: Type.Optional({ ...Slug, description: 'Default manual. netbox is reserved for NetBox syncs.' }) },
  { additionalProperties: false },
);

export const DeviceChanges = Type.Object(
  {
    ...editable,
    name: Type.Optional(Name),
    host: Type.Optional(Host),
    device_type: Type.Optional(DeviceType),
    profile_id: Type.Optional(Uuid),
  },
  { additionalProperties: false, description: 'Any create field except source; only fields sent change.' },
);

export const DeviceSummary = Type.Object({
  id: Uuid,
  org_id: Uuid,
  name: Type.String(),
  host: Type.String(),
  device_type: Type.String(),
  manufacturer: Type.String(),
  model: Type.String(),
  site: Type.String(),
  source: Type.String(),
  profile_id: Uuid,
  created_at: Timestamp,
  updated_at: Timestamp,
});

/** The pinned SSH host key (trust on first use), as OpenSSH shows it. */
export const DeviceSshHostKey = Type.Object({
  type: Type.String({ description: 'Key type, e.g. ssh-ed25519.' }),
  fingerprint: Type.String({ description: 'OpenSSH SHA256 fingerprint: SHA256:<unpadded base64>.' }),
  seen_at: Timestamp,
});

/** The pinned gNMI TLS certificate (trust on first use). */
export const DeviceGnmiCertificate = Type.Object({
  sha256: Type.String({
    description: 'SHA-256 of the DER certificate, upper-case hex pairs joined by colons (as openssl x509 -fingerprint -sha256 prints it).',
  }),
  subject: Type.String({ description: 'Certificate subject, e.g. CN=sw-1.' }),
  not_after: Nullable(Timestamp),
  seen_at: Timestamp,
});

export const Device = Type.Object({
  ...DeviceSummary.properties,
  protocol: Type.String(),
  description: Type.String(),
  platform: Type.String(),
  serial_number: Type.String(),
  asset_tag: Type.String(),
  tags: Type.Array(Type.String()),
  metadata: Metadata,
  site_id: Nullable(Uuid),
  poll_enabled: Type.Boolean(),
  poll_interval_minutes: Nullable(Type.Integer()),
  netbox_source_id: Nullable(Uuid),
  netbox_id: Nullable(Type.Integer()),
  netbox_last_synced_at: Nullable(Timestamp),
  netbox_removed_at: Nullable(Timestamp),
  created_by: Nullable(Uuid),
  updated_by: Nullable(Uuid),
  ssh_host_key: Nullable(DeviceSshHostKey),
  gnmi_certificate: Nullable(DeviceGnmiCertificate),
});

export const DeviceListQuery = Type.Object({
  q: Type.Optional(Type.String({ maxLength: 200, description: 'Free text over name, host, manufacturer, model, platform, device type.' })),
  vendor: Type.Optional(Type.String({ maxLength: 200, description: 'Manufacturer, case-insensitive exact.' })),
  platform: Type.Optional(Type.String({ maxLength: 200 })),
  device_type: Type.Optional(Type.String({ maxLength: 64 })),
  site_id: Type.Optional(Uuid),
  site: Type.Optional(Type.String({ maxLength: 200, description: 'Free-text site name, case-insensitive exact.' })),
  source: Type.Optional(Type.String({ maxLength: 32 })),
  sort: Type.Optional(
    StringEnum(DEVICE_SORTS, {
      description: 'Beyond API.md: the column to order by (vendor and site case-insensitively), ties broken by id. Without sort and order: by name.',
    }),
  ),
  order: Type.Optional(StringEnum(SORT_ORDERS, { description: 'Beyond API.md: asc (default) or desc.' })),
  ...Paging(50, 100),
});

export const DeviceList = Type.Object({ devices: Type.Array(DeviceSummary), total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() });

/** Fields bulk edit may set, all at once on every listed device. */
export const BulkFields = Type.Object(
  {
    profile_id: Type.Optional(Uuid),
    site_id: Type.Optional(Nullable(Uuid)),
    site: Type.Optional(Text(200)),
    device_type: Type.Optional(DeviceType),
    manufacturer: Type.Optional(Text(200)),
    model: Type.Optional(Text(200)),
    platform: Type.Optional(Text(200)),
    description: Type.Optional(Text(2000)),
    tags: Type.Optional(Tags),
    poll_enabled: Type.Optional(Type.Boolean()),
    poll_interval_minutes: Type.Optional(Nullable(PollInterval)),
  },
  { additionalProperties: false },
);

export const BulkBody = Type.Object({ ids: Type.Array(Uuid, { maxItems: 100000 }), fields: BulkFields }, { additionalProperties: false });

export const ImportQuery = Type.Object({ profile_id: Type.Optional(Uuid) });

/** JSON import: objects with the CSV column names; each row is checked on its own. */
export const JsonImportBody = Type.Array(Type.Unknown(), {
  maxItems: MAX_IMPORT_ROWS,
  description: `Objects with name, host, device_type, manufacturer, model, platform, site, description; at most ${MAX_IMPORT_ROWS.toLocaleString('en-US')}.`,
});

export const ImportSummary = Type.Object({
  imported: Type.Integer(),
  failed: Type.Integer(),
  errors: Type.Array(Type.Object({ row: Type.Integer(), name: Type.String(), error: Type.String() })),
});
