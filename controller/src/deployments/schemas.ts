import { Type, type TProperties } from '@sinclair/typebox';
import { Nullable, Paging, Timestamp, Uuid } from '../http/schemas';
import { VariableValues } from '../stacks/schemas';

export const TargetDevices = Type.Array(Type.Object({ device_id: Uuid }, { additionalProperties: false }), { minItems: 1, maxItems: 10_000 });

/** Run options shared by POST /deployments and POST /instances/:id/deploy. */
const runOptions = {
  allow_empty_replace: Type.Optional(
    Type.Boolean({
      description:
        'Send a replace whose rendered payload is empty (no leaves, empty list or object, blank text) anyway; such a replace empties its ' +
        'target. Default false: refused with 400 EMPTY_REPLACE_REFUSED.',
    }),
  ),
  dry_run: Type.Optional(
    Type.Boolean({
      description:
        "Compute each device's diff against its running config and change nothing (no backup either). Ends dry_run_completed or " +
        "dry_run_failed; the diffs are the devices' dry_run_diff.",
    }),
  ),
};

export const DeploymentBody = Type.Object(
  {
    stack_id: Uuid,
    name: Type.String({ minLength: 1, maxLength: 200 }),
    target_devices: TargetDevices,
    variable_values: Type.Optional(VariableValues),
    ...runOptions,
  },
  { additionalProperties: false },
);

/**
 * A body that may be absent altogether: no `type`, because API.md's calls send none, which an
 * object schema would refuse; when sent, it is the object of `properties`.
 */
function optionalObjectBody<T>(properties: TProperties, description: string) {
  return Type.Unsafe<T>({ ...Type.Object(properties, { additionalProperties: false }), type: undefined, description });
}

/** The optional body of POST /instances/:id/deploy. */
export type RunOptionsT = { allow_empty_replace?: boolean; dry_run?: boolean };
export const RunOptionsBody = optionalObjectBody<RunOptionsT>(runOptions, 'Optional. Run options (as on POST /deployments).');

/** The optional body of POST /deployments/:id/rollback. */
export type RollbackOptionsT = { force?: boolean };
export const RollbackBody = optionalObjectBody<RollbackOptionsT>(
  {
    force: Type.Optional(
      Type.Boolean({
        description:
          'Push the backups back even onto devices whose running config is no longer the one the deployment left (changed since by ' +
          'hand or by a later deployment), undoing that change too. Default false: such devices end rollback_failed, saying so.',
      }),
    ),
  },
  'Optional. { "force": true } rolls back devices changed since the deployment too.',
);

/** The fields of a body that may be absent (or, schema-less, not an object). */
export function optionsOf<T extends object>(body: unknown): T {
  return (body && typeof body === 'object' ? body : {}) as T;
}

const deploymentFields = {
  id: Uuid,
  stack_id: Uuid,
  instance_id: Nullable(Uuid),
  name: Type.String(),
  status: Type.String({
    description: 'pending, in_progress, completed, failed, rolling_back or rolled_back; a dry run ends dry_run_completed or dry_run_failed',
  }),
  dry_run: Type.Boolean({ description: 'Started with dry_run: nothing is changed on the devices.' }),
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
  status: Type.String({
    description:
      'queued, running, completed, failed, restore_queued, restoring, restored, restore_failed, rollback_queued, rolling_back, rolled_back or rollback_failed',
  }),
  rendered_config: Type.String(),
  target_path: Nullable(Type.String()),
  operation: Type.String(),
  config_format: Type.String(),
  transport: Type.String(),
  backup_config_id: Nullable(Uuid),
  error_message: Nullable(Type.String()),
  dry_run_diff: Nullable(
    Type.String({
      description:
        "Dry runs: unified diff of the device's config after the change against its running config ('' when nothing would change); the same " +
        'on each service entry of the device. null otherwise.',
    }),
  ),
});

export const DeploymentWithDevices = Type.Object({ ...deploymentFields, devices: Type.Array(DeploymentDevice) });

export const DeploymentQuery = Type.Object({ stack_id: Type.Optional(Uuid), ...Paging(100, 1000) });

export const LogQuery = Type.Object({ device_id: Type.Optional(Uuid), ...Paging(100, 1000) });

export const LogPage = Type.Object({
  logs: Type.Array(
    Type.Object({ id: Type.Integer(), level: Type.String(), message: Type.String(), device_id: Nullable(Uuid), created_at: Timestamp }),
  ),
  total: Type.Integer(),
  limit: Type.Integer(),
  offset: Type.Integer(),
});
