import { Type } from '@sinclair/typebox';
import { Nullable, Paging, Timestamp, Uuid } from '../http/schemas';

const TaskType = Type.Union([Type.Literal('deployment'), Type.Literal('snapshot'), Type.Literal('backup')]);
const Method = Type.Union([Type.Literal('cli'), Type.Literal('structured'), Type.Literal('both')]);
const DeviceFilter = Type.Object(
  {
    site_id: Type.Optional(Uuid),
    device_type: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    device_ids: Type.Optional(Type.Array(Uuid, { minItems: 1, maxItems: 100_000 })),
  },
  { additionalProperties: false, description: 'backup tasks: the devices to back up (empty: every device of the organization)' },
);
const Cron = Type.String({
  minLength: 1,
  maxLength: 200,
  description: 'Five fields (minute hour day month weekday), six with seconds first, or @hourly/@daily/@weekly/@monthly/@yearly',
});
const Timezone = Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone the cron expression is read in (default UTC)' });

/** What a task's owner may change; type is fixed at creation. */
const editable = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  cron: Cron,
  timezone: Type.Optional(Timezone),
  enabled: Type.Optional(Type.Boolean()),
  instance_id: Type.Optional(Uuid),
  snapshot_id: Type.Optional(Uuid),
  device_filter: Type.Optional(DeviceFilter),
  method: Type.Optional(Method),
};

export const TaskBody = Type.Object({ ...editable, type: TaskType }, { additionalProperties: false });

export const TaskChanges = Type.Object(
  { ...editable, name: Type.Optional(editable.name), cron: Type.Optional(editable.cron) },
  { additionalProperties: false, minProperties: 1 },
);

export const Task = Type.Object({
  id: Uuid,
  name: Type.String(),
  type: Type.String(),
  cron: Type.String(),
  timezone: Type.String(),
  enabled: Type.Boolean(),
  instance_id: Nullable(Uuid),
  snapshot_id: Nullable(Uuid),
  device_filter: Type.Record(Type.String(), Type.Unknown()),
  method: Type.String(),
  last_run_at: Nullable(Timestamp),
  next_run_at: Nullable(Timestamp),
  last_status: Nullable(
    Type.String({ description: 'running, succeeded, failed, or skipped (not run: last_error says why, e.g. its creator is disabled)' }),
  ),
  last_error: Nullable(Type.String()),
  last_result: Nullable(Type.Record(Type.String(), Type.Unknown())),
  created_by_name: Type.String(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const TaskRun = Type.Object({
  scheduled_for: Timestamp,
  controller: Type.String(),
  status: Type.String(),
  error: Nullable(Type.String()),
  result: Nullable(Type.Record(Type.String(), Type.Unknown())),
  started_at: Timestamp,
  finished_at: Nullable(Timestamp),
});

export const TaskQuery = Type.Object({ type: Type.Optional(TaskType), ...Paging(100, 1000) });
export const RunQuery = Type.Object(Paging(100, 1000));
