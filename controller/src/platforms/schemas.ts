import { Type } from '@sinclair/typebox';
import { Timestamp, Uuid } from '../http/schemas';

export const Platform = Type.Object({
  id: Uuid,
  name: Type.String({ description: 'OS label, a hyphen and the transport, e.g. vendor_eos-gnmi or ietf-netconf.' }),
  display_name: Type.String(),
  transport: Type.Union([Type.Literal('gnmi'), Type.Literal('netconf')]),
  default_port: Type.Integer(),
  config_format: Type.String(),
  capabilities: Type.Record(Type.String(), Type.Unknown()),
  created_at: Timestamp,
});
