import { Type } from '@sinclair/typebox';
import { Nullable, Timestamp, Uuid } from '../http/schemas';
import { MAX_ALLOWED_NETWORKS } from '../../../shared/src/device/networks';

const Port = Type.Integer({ minimum: 1, maximum: 65535 });
const Secret = (description: string) => Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 16384, description })));
const Transport = Nullable(Type.Union([Type.Literal('gnmi'), Type.Literal('netconf')]));
const NETWORKS_DOC =
  "Networks (CIDR, IPv4 and IPv6) the profile's credentials may be sent to; empty: no limit. The controller refuses devices whose " +
  'IP-address host is outside them, and the agent refuses any session to an address outside them (a DNS name is checked on every ' +
  'address it resolves to) before a credential leaves it.';

const editable = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  username: Type.Optional(Type.String({ maxLength: 200 })),
  password: Secret('Write-only. null clears it; omitted keeps it.'),
  private_key: Secret('Write-only SSH private key (PEM or OpenSSH). null clears it; omitted keeps it.'),
  enable_password: Secret('Write-only. null clears it; omitted keeps it.'),
  ssh_port: Type.Optional(Port),
  netconf_port: Type.Optional(Port),
  gnmi_port: Type.Optional(Port),
  gnmi_tls: Type.Optional(Type.Boolean()),
  gnmi_skip_verify: Type.Optional(Type.Boolean()),
  automation_transport: Type.Optional(Transport),
  allowed_networks: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
      maxItems: MAX_ALLOWED_NETWORKS,
      description:
        `${NETWORKS_DOC} Entries are stored normalized (10.1.2.3/16 becomes 10.1.0.0/16; a bare address is a /32 or /128). ` +
        'Setting or changing it needs the configs.secrets permission; [] removes the limit.',
    }),
  ),
  ca_certificate: Type.Optional(
    Nullable(
      Type.String({
        minLength: 1,
        maxLength: 65536,
        description:
          "PEM CA certificate(s) that signed the devices' gNMI TLS certificates; trusted for this profile's devices instead of the agent's " +
          'roots. null clears it.',
      }),
    ),
  ),
};

export const ProfileBody = Type.Object(editable, { additionalProperties: false });
export const ProfileChanges = Type.Object({ ...editable, name: Type.Optional(editable.name) }, { additionalProperties: false });

/** A profile as returned: secrets appear only as has_* flags. */
export const Profile = Type.Object({
  id: Uuid,
  org_id: Uuid,
  name: Type.String(),
  username: Type.String(),
  has_password: Type.Boolean(),
  has_private_key: Type.Boolean(),
  has_enable_password: Type.Boolean(),
  ssh_port: Type.Integer(),
  netconf_port: Type.Integer(),
  gnmi_port: Type.Integer(),
  gnmi_tls: Type.Boolean(),
  gnmi_skip_verify: Type.Boolean(),
  automation_transport: Transport,
  allowed_networks: Type.Array(Type.String(), { description: NETWORKS_DOC }),
  ca_certificate: Nullable(Type.String({ description: 'PEM CA certificate(s) trusted for TLS to these devices.' })),
  device_count: Type.Integer({ description: 'Devices using this profile.' }),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const ProfileList = Type.Object({ profiles: Type.Array(Profile), total: Type.Integer() });

export const AssignBody = Type.Object(
  { profile_id: Uuid, device_ids: Type.Array(Uuid, { minItems: 1, maxItems: 100000 }) },
  { additionalProperties: false },
);
export const Updated = Type.Object({ updated: Type.Integer() });
