import { Type } from '@sinclair/typebox';
import { Nullable, Paging, Timestamp, Uuid } from '../http/schemas';

const Method = Type.Union([Type.Literal('cli'), Type.Literal('structured'), Type.Literal('both')], {
  default: 'both',
  description: "cli uses SSH; structured uses the profile's gNMI or NETCONF transport; both (default) tries each and stores each separately.",
});

export const DeviceParams = Type.Object({ device_id: Uuid });
export const VersionParams = Type.Object({ device_id: Uuid, version: Type.Integer({ minimum: 1, maximum: 2147483647 }) });

export const ConfigVersion = Type.Object({
  id: Uuid,
  device_id: Uuid,
  version: Type.Integer(),
  method: Type.String({ description: 'cli or structured: the pull method that produced this version.' }),
  config_format: Type.String({ description: 'cli, xml (NETCONF) or json (gNMI); none when a structured attempt had no transport.' }),
  config_hash: Type.String({ description: 'SHA-256 of config_text.' }),
  source: Type.String({ description: 'pull or snapshot.' }),
  pulled_via: Type.String({ description: 'ssh, netconf or gnmi.' }),
  status: Type.String({ description: 'success or failed.' }),
  error_message: Nullable(Type.String()),
  snapshot_id: Nullable(Uuid),
  notes: Type.String(),
  notes_by: Type.String(),
  size_bytes: Type.Integer(),
  line_count: Type.Integer(),
  created_at: Timestamp,
});

export const ConfigVersionWithText = Type.Composite([ConfigVersion, Type.Object({ config_text: Type.String() })]);

export const PullQuery = Type.Object({ method: Type.Optional(Method) }, { additionalProperties: false });

const VersionSummary = Type.Object({ method: Type.String(), version: Type.Integer(), status: Type.String(), error_message: Nullable(Type.String()) });

export const PullResult = Type.Object({
  message: Type.String(),
  structured: Type.Boolean({ description: 'The structured method succeeded.' }),
  cli: Type.Boolean({ description: 'The cli method succeeded.' }),
  versions: Type.Array(VersionSummary, { description: 'The versions this pull stored, failed ones included.' }),
});

export const BulkPullBody = Type.Object(
  {
    device_ids: Type.Array(Uuid, { minItems: 1, maxItems: 10000 }),
    method: Type.Optional(Method),
  },
  { additionalProperties: false },
);

export const BulkPullResult = Type.Object({ message: Type.String(), snapshot_id: Uuid, devices_queued: Type.Integer() });

export const ConfigList = Type.Object({ configs: Type.Array(ConfigVersion), total: Type.Integer() });
export const ConfigListQuery = Type.Object(Paging(50, 500), { additionalProperties: false });

export const NotesBody = Type.Object({ notes: Type.String({ maxLength: 10000 }) }, { additionalProperties: false });

const reveal = Type.Optional(
  Type.Boolean({
    description:
      "true: the config as stored, the device's secrets unmasked (permission configs.secrets; audited). Default: each secret shown as " +
      '<secret:xxxxxxxx>, a keyed hash stable across versions.',
  }),
);

export const RevealQuery = Type.Object({ reveal }, { additionalProperties: false });

export const DiffQuery = Type.Object(
  { old_version: Type.Integer({ minimum: 1, maximum: 2147483647 }), new_version: Type.Integer({ minimum: 1, maximum: 2147483647 }), reveal },
  { additionalProperties: false },
);

export const VersionDiff = Type.Object({
  old_version: Type.Integer(),
  new_version: Type.Integer(),
  old_format: Type.String(),
  new_format: Type.String(),
  identical: Type.Boolean(),
  diff: Type.String({ description: 'Unified line diff: removed lines start with -, added with +, unchanged with a space. Empty when identical.' }),
  additions: Type.Integer(),
  deletions: Type.Integer(),
});

const TransportCheck = Type.Object({
  transport: Type.Union([Type.Literal('ssh'), Type.Literal('netconf'), Type.Literal('gnmi')]),
  status: Type.Union([Type.Literal('ok'), Type.Literal('failed'), Type.Literal('unavailable')], {
    description: 'unavailable: nothing answered on the port (SSH on a device reached over gNMI or NETCONF); not a credential failure.',
  }),
  message: Type.String(),
});

const CredentialResult = Type.Object({
  device_id: Uuid,
  device_name: Type.String(),
  success: Type.Boolean(),
  message: Type.String({ description: 'On failure, names the transport that failed.' }),
  duration_ms: Type.Integer(),
  transports: Type.Array(TransportCheck, {
    description: "Each transport of the device's profile tried: the automation transport (gNMI or NETCONF) first, then SSH.",
  }),
});

export const CredentialResults = Type.Object({
  results: Type.Array(CredentialResult),
  total: Type.Integer(),
  succeeded: Type.Integer(),
  failed: Type.Integer(),
});
export const TestCredentialResult = CredentialResult;

export const BulkTestBody = Type.Object({ device_ids: Type.Array(Uuid, { minItems: 1, maxItems: 500 }) }, { additionalProperties: false });

const BackupInfo = Type.Object({
  id: Uuid,
  version: Type.Integer(),
  status: Type.String(),
  method: Type.String(),
  config_format: Type.String(),
  config_hash: Type.String(),
  size_bytes: Type.Integer(),
  line_count: Type.Integer(),
  error_message: Nullable(Type.String()),
  created_at: Type.String({ format: 'date-time' }),
});

export const DeviceWithBackup = Type.Object({
  id: Uuid,
  name: Type.String(),
  host: Type.String(),
  device_type: Type.String(),
  site_id: Nullable(Uuid),
  site: Type.String(),
  profile_id: Uuid,
  last_backup: Nullable(BackupInfo),
  last_successful_backup: Nullable(BackupInfo),
  backup_count: Type.Integer(),
});

export const WithBackupQuery = Type.Object(
  { site_id: Type.Optional(Uuid), device_type: Type.Optional(Type.String({ maxLength: 64 })), ...Paging(50, 500) },
  { additionalProperties: false },
);
export const DevicesWithBackup = Type.Object({ devices: Type.Array(DeviceWithBackup), total: Type.Integer() });
