import { Type } from '@sinclair/typebox';
import { Nullable, Paging, Timestamp, Uuid } from '../http/schemas';

const FilterValue = Type.Union([Type.String({ maxLength: 200 }), Type.Number(), Type.Boolean()]);
const DeviceFilters = Type.Record(Type.String({ pattern: '^[a-z0-9_]+$' }), Type.Union([FilterValue, Type.Array(FilterValue, { maxItems: 100 })]), {
  description: 'NetBox /api/dcim/devices/ query filters, e.g. {"site": ["fra1", "ams1"], "status": "active", "tag": "managed"}.',
  maxProperties: 50,
  additionalProperties: false,
});
const PlatformMap = Type.Record(Type.String({ maxLength: 100 }), Type.String({ maxLength: 64 }), {
  description: 'NetBox platform slug (or name) → device_type for devices of that platform, e.g. {"eos": "vendor_eos"}.',
  maxProperties: 200,
});

const fields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  url: Type.String({ minLength: 1, maxLength: 2000, description: 'NetBox base URL, e.g. https://netbox.example.com.' }),
  token: Type.String({ minLength: 1, maxLength: 1024, description: 'Write-only NetBox API token (sent as Authorization: Token …).' }),
  device_filters: Type.Optional(DeviceFilters),
  verify_ssl: Type.Optional(Type.Boolean({ description: 'Check the NetBox TLS certificate (default true).' })),
  profile_id: Type.Optional(Nullable(Uuid)),
  default_device_type: Type.Optional(
    Type.String({ maxLength: 64, description: 'device_type of new devices whose platform platform_map does not name (default generic).' }),
  ),
  platform_map: Type.Optional(PlatformMap),
  delete_missing: Type.Optional(
    Type.Boolean({ description: 'Delete devices NetBox no longer lists, instead of marking them with netbox_removed_at (default false).' }),
  ),
  timeout_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 300, description: 'Time limit of each NetBox request (default 30).' })),
};

export const SourceBody = Type.Object(fields, { additionalProperties: false });
export const SourceChanges = Type.Object(
  { ...fields, name: Type.Optional(fields.name), url: Type.Optional(fields.url), token: Type.Optional(fields.token) },
  { additionalProperties: false },
);

export const Source = Type.Object({
  id: Uuid,
  org_id: Uuid,
  name: Type.String(),
  url: Type.String(),
  has_token: Type.Boolean(),
  device_filters: Type.Record(Type.String(), Type.Unknown()),
  verify_ssl: Type.Boolean(),
  profile_id: Nullable(Uuid),
  default_device_type: Type.String(),
  platform_map: Type.Record(Type.String(), Type.String()),
  delete_missing: Type.Boolean(),
  timeout_seconds: Type.Integer(),
  device_count: Type.Integer({ description: 'Devices synced from this source.' }),
  last_sync_at: Nullable(Timestamp),
  last_sync_status: Nullable(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const SourceParams = Type.Object({ source_id: Uuid });
export const SourceList = Type.Object({ sources: Type.Array(Source), total: Type.Integer() });

export const SourceTest = Type.Object({
  ok: Type.Boolean(),
  count: Type.Optional(Type.Integer({ description: 'Devices matching device_filters.' })),
  netbox_version: Type.Optional(Type.String()),
  error: Type.Optional(Type.String()),
});

const SyncError = Type.Object({ netbox_id: Type.Optional(Type.Integer()), name: Type.Optional(Type.String()), error: Type.String() });

export const SyncResult = Type.Object({
  id: Uuid,
  source_id: Nullable(Uuid),
  source_name: Type.String(),
  status: Type.String({ description: 'success, partial (some devices failed) or failed (nothing changed).' }),
  added: Type.Integer(),
  updated: Type.Integer(),
  unchanged: Type.Integer(),
  failed: Type.Integer(),
  removed: Type.Integer(),
  errors: Type.Array(SyncError),
  duration_ms: Type.Integer(),
  started_at: Timestamp,
  finished_at: Timestamp,
  triggered_by: Nullable(Uuid),
});

export const HistoryQuery = Type.Object({ source_id: Type.Optional(Uuid), ...Paging(50, 500) });
export const History = Type.Object({ history: Type.Array(SyncResult), total: Type.Integer() });
