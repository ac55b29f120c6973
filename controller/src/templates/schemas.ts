import { Type } from '@sinclair/typebox';
import { Nullable, Paging, Timestamp, Uuid } from '../http/schemas';

export const ConfigFormat = Type.Union([Type.Literal('json'), Type.Literal('xml'), Type.Literal('cli')]);
export const Operation = Type.Union([Type.Literal('replace'), Type.Literal('merge'), Type.Literal('delete')], {
  description: 'replace (default) or delete acts on the target_path subtree; merge adds to the config without removing anything.',
});

export const TemplateVariable = Type.Object({
  name: Type.String(),
  type: Type.String({ description: 'string, number, boolean, list (used in a for loop) or object (has attributes)' }),
  required: Type.Boolean({ description: 'False when every use is defaulted (| default) or guarded ({% if x %}, x is defined).' }),
});

const templateFields = {
  id: Uuid,
  name: Type.String(),
  description: Type.String(),
  platform: Type.String(),
  config_format: Type.String(),
  operation: Type.String(),
  target_path: Nullable(Type.String()),
  current_version: Type.Integer(),
  variables: Type.Array(TemplateVariable),
  created_at: Timestamp,
  updated_at: Timestamp,
};

export const TemplateSummary = Type.Object(templateFields);
export const Template = Type.Object({ ...templateFields, source: Type.String() });

const Name = Type.String({ minLength: 1, maxLength: 200 });
const Source = Type.String({ maxLength: 1024 * 1024 });
const TargetPath = Type.String({
  maxLength: 2000,
  description:
    'The YANG/OpenConfig path of the subtree the push acts on (/interfaces/interface[name=eth0]); a label for cli templates. A json or ' +
    "xml replace or delete needs one, and not the root ('/'): 400 TARGET_PATH_REQUIRED or ROOT_TARGET_REFUSED.",
});

export const TemplateBody = Type.Object(
  {
    name: Name,
    platform: Type.String({ minLength: 1, maxLength: 100 }),
    config_format: ConfigFormat,
    source: Source,
    operation: Type.Optional(Operation),
    target_path: Type.Optional(Nullable(TargetPath)),
    description: Type.Optional(Type.String({ maxLength: 4000 })),
  },
  { additionalProperties: false },
);

export const TemplateChanges = Type.Object(
  {
    name: Type.Optional(Name),
    platform: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    config_format: Type.Optional(ConfigFormat),
    source: Type.Optional(Source),
    operation: Type.Optional(Nullable(Operation)),
    target_path: Type.Optional(Nullable(TargetPath)),
    description: Type.Optional(Type.String({ maxLength: 4000 })),
  },
  { additionalProperties: false },
);

export const TemplateQuery = Type.Object({ platform: Type.Optional(Type.String()), ...Paging(100, 1000) });

export const RenderBody = Type.Object(
  {
    variables: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    version: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
);
export const RenderResult = Type.Object({ rendered: Type.String(), format: Type.String() });

/** A source checked without saving it (the console's editor asks while the operator types). */
export const ValidateBody = Type.Object({ source: Source }, { additionalProperties: false });
export const ValidateResult = Type.Object({
  valid: Type.Boolean(),
  error: Nullable(Type.Object({ message: Type.String(), line: Nullable(Type.Integer()), column: Nullable(Type.Integer()) })),
  variables: Type.Array(TemplateVariable),
});

export const TemplateVersion = Type.Object({
  version: Type.Integer(),
  source: Type.String(),
  variables: Type.Array(TemplateVariable),
  created_by: Type.String(),
  created_at: Timestamp,
});
export const VersionParams = Type.Object({ id: Uuid, version: Type.Integer({ minimum: 1 }) });
