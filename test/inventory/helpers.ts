import { randomBytes } from 'node:crypto';
import type { TestController } from '../helpers/controller';

/** A signed-in user of a fresh organization with devices.access, and helpers bound to that token. */
export async function inventoryUser(c: TestController, roles = ['operator']) {
  return boundTo(c, await c.createOrgUser(roles));
}

/** Another user of `admin`'s organization (created by `admin`, an org admin) with `roles`, and the same helpers. */
export async function orgMember(c: TestController, admin: InventoryUser, roles = ['operator']) {
  const username = `member-${randomBytes(4).toString('hex')}`;
  const password = `pw-${randomBytes(12).toString('hex')}`;
  const created = await admin.as('POST', '/api/admin/users', { body: { username, password, roles } });
  if (created.status !== 201) throw new Error(`user create failed: ${created.text}`);
  const login = await c.login(username, password);
  return boundTo(c, { orgId: admin.orgId, userId: created.body.id as string, token: login.body.access_token as string, username, password });
}

function boundTo(c: TestController, user: Awaited<ReturnType<TestController['createOrgUser']>>) {
  const as = (method: string, path: string, options: Parameters<TestController['request']>[2] = {}) =>
    c.request(method, path, { token: user.token, ...options });
  const profile = async (body: Record<string, unknown> = {}) => {
    const res = await as('POST', '/api/profiles', {
      body: { name: `profile-${Math.random().toString(36).slice(2, 8)}`, username: 'netops', ...body },
    });
    if (res.status !== 201) throw new Error(`profile create failed: ${res.text}`);
    return res.body as { id: string; name: string };
  };
  const device = async (profileId: string, body: Record<string, unknown> = {}) => {
    const res = await as('POST', '/api/devices', {
      body: { name: `dev-${Math.random().toString(36).slice(2, 10)}`, host: '192.0.2.10', device_type: 'vendor_ios', profile_id: profileId, ...body },
    });
    if (res.status !== 201) throw new Error(`device create failed: ${res.text}`);
    return res.body as { id: string; name: string } & Record<string, unknown>;
  };
  const site = async (body: Record<string, unknown> = {}) => {
    const res = await as('POST', '/api/sites', { body: { name: `site-${Math.random().toString(36).slice(2, 8)}`, ...body } });
    if (res.status !== 201) throw new Error(`site create failed: ${res.text}`);
    return res.body as { id: string; name: string } & Record<string, unknown>;
  };
  return { ...user, as, profile, device, site };
}

export type InventoryUser = ReturnType<typeof boundTo>;
