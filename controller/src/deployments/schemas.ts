import { Type } from '@sinclair/typebox';
import { Nullable, Paging, Timestamp, Uuid } from '../http/schemas';
import { VariableValues } from '../stacks/schemas';

export const TargetDevices = Type.Array(Type.Object({ device_id: Uuid }, { additionalProperties: false }), { minItems: 1, maxItems: 10_000 });

export const DeploymentBody = Type.Object(
  {
    stack_id: Uuid,
    name: Type.String({ minLength: 1, maxLength: 200 }),
    target_devices: TargetDevices,
    variable_values: Type.Optional(VariableValues),
  },
  { additionalProperties: false },
);

const deploymentFields = {
  id: Uuid,
  stack_id: Uuid,
  instance_id: Nullable(Uuid),
  name: Type.String(),
  status: Type.String({ description: 'pending, in_progress, completed, failed, rolling_back or rolled_back' }),
  atomic: Type.Boolean(),
  total_devices: Type.Integer(),
  succeeded_count: Type.Integer(),
  failed_count: Type.Integer(),
  started_at: Nullable(Timestamp),
  completed_at: Nullable(Timestamp),
  target_devices: Type.Array(Type.Object({ device_id: Uuid })),
  variable_values: Type.Record(Type.String(), Type.Unknown()),
  error_message: Nullable(Type.String()),
  created_by: Nullable(Uuid),
  created_by_name: Type.String(),
  created_at: Timestamp,
  updated_at: Timestamp,
};

export const Deployment = Type.Object(deploymentFields);

export const DeploymentDevice = Type.Object({
  device_id: Uuid,
  device_name: Type.String(),
  service_name: Type.String(),
  service_order: Type.Integer(),
  template_id: Uuid,
  status: Type.String({ description: 'queued, running, completed, failed, restore_queued, restoring, restored, restore_failed, rollback_queued, rolling_back, rolled_back or rollback_failed' }),
  rendered_config: Type.String(),
  target_path: Nullable(Type.String()),
  operation: Type.String(),
  config_format: Type.String(),
  transport: Type.String(),
  backup_config_id: Nullable(Uuid),
  error_message: Nullable(Type.String()),
});

export const DeploymentWithDevices = Type.Object({ ...deploymentFields, devices: Type.Array(DeploymentDevice) });

export const DeploymentQuery = Type.Object({ stack_id: Type.Optional(Uuid), ...Paging(100, 1000) });

export const LogQuery = Type.Object({ device_id: Type.Optional(Uuid), ...Paging(100, 1000) });

export const LogPage = Type.Object({
  logs: Type.Array(Type.Object({ id: Type.Integer(), level: Type.String(), message: Type.String(), device_id: Nullable(Uuid), created_at: Timestamp })),
  total: Type.Integer(),
  limit: Type.Integer(),
  offset: Type.Integer(),
});
