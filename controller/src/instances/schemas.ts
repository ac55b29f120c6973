import { Type } from '@sinclair/typebox';
import { Nullable, Paging, Timestamp, Uuid } from '../http/schemas';
import { TargetDevices } from '../deployments/schemas';
import { VariableValues } from '../stacks/schemas';

export const InstanceBody = Type.Object(
  {
    stack_id: Uuid,
    name: Type.String({ minLength: 1, maxLength: 200 }),
    target_devices: TargetDevices,
    variable_values: Type.Optional(VariableValues),
    description: Type.Optional(Type.String({ maxLength: 4000 })),
  },
  { additionalProperties: false },
);

export const InstanceChanges = Type.Object(
  {
    stack_id: Type.Optional(Uuid),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    target_devices: Type.Optional(TargetDevices),
    variable_values: Type.Optional(VariableValues),
    description: Type.Optional(Type.String({ maxLength: 4000 })),
  },
  { additionalProperties: false },
);

export const Instance = Type.Object({
  id: Uuid,
  stack_id: Uuid,
  name: Type.String(),
  description: Type.String(),
  target_devices: Type.Array(Type.Object({ device_id: Uuid })),
  variable_values: Type.Record(Type.String(), Type.Unknown()),
  last_deployment_id: Nullable(Uuid),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const InstanceQuery = Type.Object(Paging(100, 1000));
