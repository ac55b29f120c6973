import { Type } from '@sinclair/typebox';
import { Timestamp, Uuid } from '../http/schemas';

export const Organization = Type.Object({ id: Uuid, name: Type.String(), is_default: Type.Boolean(), created_at: Timestamp, updated_at: Timestamp });
export const OrganizationBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });

export const User = Type.Object({
  id: Uuid,
  home_org_id: Uuid,
  username: Type.String(),
  email: Type.String(),
  display_name: Type.String(),
  auth_provider: Type.String(),
  roles: Type.Array(Type.String()),
  is_active: Type.Boolean(),
  is_platform_admin: Type.Boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

const Username = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._@-]+$' });
const Roles = Type.Array(Type.String({ minLength: 1 }), { maxItems: 20, uniqueItems: true });

export const NewUserBody = Type.Object(
  {
    username: Username,
    password: Type.String({ maxLength: 1024 }),
    email: Type.Optional(Type.String({ maxLength: 320 })),
    display_name: Type.Optional(Type.String({ maxLength: 200 })),
    roles: Type.Optional(Roles),
  },
  { additionalProperties: false },
);

export const UserChangesBody = Type.Object(
  {
    email: Type.Optional(Type.String({ maxLength: 320 })),
    display_name: Type.Optional(Type.String({ maxLength: 200 })),
    is_active: Type.Optional(Type.Boolean()),
    password: Type.Optional(Type.String({ maxLength: 1024 })),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const RolesBody = Type.Object({ roles: Roles }, { additionalProperties: false });

export const Role = Type.Object({ name: Type.String(), description: Type.String(), permissions: Type.Array(Type.String()) });

export const AuditQuery = Type.Object({
  kind: Type.Optional(Type.String()),
  user_id: Type.Optional(Uuid),
  since: Type.Optional(Timestamp),
  until: Type.Optional(Timestamp),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
});

export const AuditEntry = Type.Object({
  id: Uuid,
  org_id: Type.Union([Uuid, Type.Null()]),
  user_id: Type.Union([Uuid, Type.Null()]),
  username: Type.Union([Type.String(), Type.Null()]),
  kind: Type.String(),
  ip_address: Type.Union([Type.String(), Type.Null()]),
  details: Type.Record(Type.String(), Type.Unknown()),
  created_at: Timestamp,
});
