import { Type, type Static } from '@sinclair/typebox';
import { Nullable, Paging, Timestamp, Uuid } from '../http/schemas';

/** Largest body of the requests that carry variable_values; sized, with the reason, in http/body-limits.ts. */
export { VARIABLE_VALUES_BODY_LIMIT } from '../http/body-limits';

const FreeObject = Type.Record(Type.String(), Type.Unknown());

export const StackServiceItem = Type.Object(
  {
    template_id: Uuid,
    order: Type.Optional(Type.Integer({ description: 'Push order; services with the same order go in array order. Default: the position.' })),
    variables: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Default values of this service' })),
    api_variables: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description:
          'Variables looked up from API resources per device: {"mgmt_ip": "device.host"} or {"mgmt_ip": {"resource": "device", "field": "host"}}',
      }),
    ),
  },
  { additionalProperties: false },
);

const stackFields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  services: Type.Array(StackServiceItem, { maxItems: 200 }),
  atomic: Type.Boolean(),
  shared: Type.Boolean(),
  description: Type.String({ maxLength: 4000 }),
  variable_config: Type.Record(Type.String(), Type.Unknown(), {
    description: 'Per-variable editor settings: {"hostname": {"scope": "per_device", "source": "device.name"}, "ntp": {"scope": "shared"}}',
  }),
};

export const StackBody = Type.Object(
  {
    name: stackFields.name,
    services: stackFields.services,
    atomic: Type.Optional(stackFields.atomic),
    shared: Type.Optional(stackFields.shared),
    description: Type.Optional(stackFields.description),
    variable_config: Type.Optional(stackFields.variable_config),
  },
  { additionalProperties: false },
);

export const StackChanges = Type.Object(
  {
    name: Type.Optional(stackFields.name),
    services: Type.Optional(stackFields.services),
    atomic: Type.Optional(stackFields.atomic),
    shared: Type.Optional(stackFields.shared),
    description: Type.Optional(stackFields.description),
    variable_config: Type.Optional(Nullable(stackFields.variable_config)),
  },
  { additionalProperties: false },
);

export const Stack = Type.Object({
  id: Uuid,
  name: Type.String(),
  description: Type.String(),
  services: Type.Array(
    Type.Object({
      template_id: Uuid,
      order: Type.Integer(),
      variables: Type.Optional(FreeObject),
      api_variables: Type.Optional(FreeObject),
    }),
  ),
  atomic: Type.Boolean(),
  shared: Type.Boolean(),
  variable_config: FreeObject,
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const StackQuery = Type.Object(Paging(100, 1000));

/** variable_values: keys are service positions ("0", "1", …). */
export const ServiceValues = Type.Object(
  {
    devices: Type.Optional(Type.Array(Uuid, { maxItems: 100_000 })),
    shared_vars: Type.Optional(FreeObject),
    device_vars: Type.Optional(Type.Record(Type.String(), FreeObject)),
  },
  { additionalProperties: false },
);
export const VariableValues = Type.Record(Type.String(), ServiceValues);
export type VariableValuesT = Static<typeof VariableValues>;

/** { variable_values: {...} }; the variable_values object itself as the body is read the same way. */
export const StackRenderBody = Type.Object(
  { variable_values: Type.Optional(VariableValues) },
  { additionalProperties: false, patternProperties: { '^[0-9]+$': ServiceValues } },
);

export const RenderJob = Type.Object({
  device_id: Uuid,
  device_name: Type.String(),
  template_id: Uuid,
  template_name: Type.String(),
  service_order: Type.Integer(),
  rendered_config: Type.String(),
  target_path: Nullable(Type.String()),
  operation: Type.String(),
  config_format: Type.String(),
});

export const ResolveBody = Type.Object(
  {
    variable_values: Type.Optional(VariableValues),
    devices: Type.Optional(Type.Array(Uuid, { maxItems: 100_000, description: 'Shorthand: every service on these devices.' })),
  },
  { additionalProperties: false },
);

export const ResolveResult = Type.Object({
  variable_values: VariableValues,
  resolved: Type.Array(
    Type.Object({ service: Type.String(), device_id: Uuid, variable: Type.String(), source: Type.String(), value: Type.Unknown() }),
  ),
  unresolved: Type.Array(
    Type.Object({ service: Type.String(), device_id: Nullable(Uuid), variable: Type.String(), source: Type.String(), reason: Type.String() }),
  ),
});
