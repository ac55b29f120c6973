import { Type } from '@sinclair/typebox';
import { Nullable, Timestamp, Uuid } from '../http/schemas';

const fields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  location: Type.Optional(Type.String({ maxLength: 500 })),
  parent_site_id: Type.Optional(Nullable(Uuid)),
};

export const SiteBody = Type.Object(fields, { additionalProperties: false });
export const SiteChanges = Type.Object({ ...fields, name: Type.Optional(fields.name) }, { additionalProperties: false });

export const Site = Type.Object({
  id: Uuid,
  org_id: Uuid,
  name: Type.String(),
  description: Type.String(),
  location: Type.String(),
  parent_site_id: Nullable(Uuid),
  device_count: Type.Integer({ description: 'Devices with this site_id.' }),
  child_count: Type.Integer({ description: 'Sites whose parent is this site.' }),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const SiteList = Type.Object({ sites: Type.Array(Site), total: Type.Integer() });
