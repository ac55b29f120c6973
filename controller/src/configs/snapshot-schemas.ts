import { Type } from '@sinclair/typebox';
import { Nullable, Paging, Timestamp, Uuid } from '../http/schemas';

/** Snapshot routes answer errors as plain text (API.md). */
export const PlainError = Type.String({ description: 'Plain-text error message, e.g. "Snapshot not found".' });
export const plainErrors = (...statuses: number[]) => Object.fromEntries(statuses.map((s) => [s, PlainError]));

export const DeviceFilter = Type.Object(
  {
    site_id: Type.Optional(Uuid),
    device_type: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  },
  { additionalProperties: false, description: 'Omitted or empty means every device of the organization.' },
);

export const Snapshot = Type.Object({
  id: Uuid,
  org_id: Uuid,
  name: Type.String(),
  device_filter: Type.Object({
    site_id: Type.Optional(Uuid),
    device_type: Type.Optional(Type.String()),
    device_ids: Type.Optional(Type.Array(Uuid, { description: 'Bulk pulls: exactly these devices.' })),
  }),
  method: Type.String({ description: 'cli, structured or both: what each device backup tries.' }),
  status: Type.String({
    description: 'pending (never collected), collecting, completed (every device backed up), partial (some failed) or failed (all failed).',
  }),
  total_devices: Type.Integer(),
  successful_devices: Type.Integer(),
  failed_devices: Type.Integer(),
  timeout_seconds: Nullable(Type.Integer()),
  started_at: Nullable(Timestamp),
  completed_at: Nullable(Timestamp),
  created_by: Nullable(Uuid),
  created_by_name: Type.String(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const SnapshotEnvelope = Type.Object({ snapshot: Snapshot });
export const SnapshotList = Type.Object({ snapshots: Type.Array(Snapshot), total: Type.Integer() });
export const SnapshotListQuery = Type.Object(Paging(50, 500), { additionalProperties: false });

export const CreateSnapshotBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    device_filter: Type.Optional(DeviceFilter),
    method: Type.Optional(
      Type.Union([Type.Literal('cli'), Type.Literal('structured'), Type.Literal('both')], {
        default: 'cli',
        description: 'What each device backup tries (default cli).',
      }),
    ),
  },
  { additionalProperties: false },
);

export const CollectBody = Type.Object(
  {
    timeout_seconds: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 86400,
        description: 'Whole-collection deadline (default 600); devices without a result by then fail with the reason.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const CollectResult = Type.Object({
  message: Type.String(),
  devices_queued: Type.Integer(),
  snapshot: Snapshot,
});

export const BackupEntry = Type.Object({
  config_id: Nullable(Uuid),
  device_id: Uuid,
  device_name: Type.String(),
  version: Nullable(Type.Integer()),
  size_bytes: Nullable(Type.Integer()),
  line_count: Nullable(Type.Integer()),
  backup_method: Type.String({ description: 'cli or structured.' }),
  pulled_via: Nullable(Type.String()),
  config_hash: Nullable(Type.String()),
  status: Type.String({ description: 'success, failed, or pending while the device is being collected.' }),
  error_message: Nullable(Type.String()),
  attempts: Type.Integer(),
  created_at: Timestamp,
});

export const BackupList = Type.Object({ backups: Type.Array(BackupEntry), total: Type.Integer() });
export const ConfigIdParams = Type.Object({ config_id: Uuid });
export const BackupLog = Type.Object({ log: Type.String() });
