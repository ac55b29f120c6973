import type { TestController } from '../helpers/controller';

/** A signed-in user of a fresh organization with devices.access, and helpers bound to that token. */
export async function inventoryUser(c: TestController, roles = ['operator']) {
  const user = await c.createOrgUser(roles);
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

export type InventoryUser = Awaited<ReturnType<typeof inventoryUser>>;
