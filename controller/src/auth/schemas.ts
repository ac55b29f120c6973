import { Type } from '@sinclair/typebox';
import { Timestamp, Uuid } from '../http/schemas';

export const LoginBody = Type.Object(
  {
    username: Type.String({ minLength: 1, maxLength: 256 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
    client_type: Type.Optional(Type.Union([Type.Literal('admin_ui'), Type.Literal('terminal')], { default: 'admin_ui' })),
    public_key: Type.Optional(
      Type.String({ maxLength: 16384, description: 'OpenSSH public key; returns ssh_certificate when the service has an SSH CA.' }),
    ),
  },
  { additionalProperties: false },
);

export const TokenPairSchema = Type.Object({
  access_token: Type.String(),
  refresh_token: Type.String({ minLength: 64, maxLength: 64 }),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer(),
  ssh_certificate: Type.Optional(Type.String()),
});

export const RefreshBody = Type.Object({ refresh_token: Type.String({ minLength: 1, maxLength: 256 }) }, { additionalProperties: false });

export const ProvidersSchema = Type.Object({
  providers: Type.Array(Type.Object({ name: Type.String(), enabled: Type.Boolean() })),
});

export const MeSchema = Type.Object({
  id: Uuid,
  org_id: Uuid,
  home_org_id: Uuid,
  is_platform_admin: Type.Boolean(),
  username: Type.String(),
  email: Type.String(),
  display_name: Type.String(),
  roles: Type.Array(Type.String()),
  permissions: Type.Array(Type.String()),
  is_active: Type.Boolean(),
  auth_provider: Type.String(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const LogoutSchema = Type.Object({ message: Type.String(), sessions_revoked: Type.Integer() });

export const PasswordBody = Type.Object(
  {
    current_password: Type.String({ minLength: 1, maxLength: 1024 }),
    new_password: Type.String({ maxLength: 1024 }),
  },
  { additionalProperties: false },
);

export const SessionSchema = Type.Object({
  id: Uuid,
  created_at: Timestamp,
  expires_at: Timestamp,
  user_agent: Type.String(),
  ip_address: Type.String(),
  client_type: Type.String(),
  current: Type.Boolean(),
});

export const SwitchOrgBody = Type.Object({ org_id: Uuid }, { additionalProperties: false });
export const SwitchOrgSchema = Type.Object({
  access_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer(),
  active_org_id: Uuid,
});
