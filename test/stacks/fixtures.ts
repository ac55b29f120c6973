import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { TestController } from '../helpers/controller';

/** Inventory and template fixtures for the stack, deployment and instance suites, through the API. */
export function fixtures(c: TestController, token: string) {
  const ok = async (method: string, path: string, body: unknown, status = 201) => {
    const res = await c.request(method, path, { token, body });
    expect(res.status, `${method} ${path}: ${res.text}`).toBe(status);
    return res.body;
  };
  const suffix = () => randomBytes(3).toString('hex');
  return {
    profile: (body: Record<string, unknown> = {}) =>
      ok('POST', '/api/profiles', { name: `profile-${suffix()}`, username: 'admin', password: 'admin-password', ...body }),
    site: (body: Record<string, unknown> = {}) => ok('POST', '/api/sites', { name: `site-${suffix()}`, ...body }),
    device: (profileId: string, body: Record<string, unknown> = {}) =>
      ok('POST', '/api/devices', { name: `dev-${suffix()}`, host: '127.0.0.1', device_type: 'vendor_eos', profile_id: profileId, ...body }),
    /** A gNMI json template; its replace names /system/config unless `body` says otherwise (a replace needs a target_path). */
    template: (body: Record<string, unknown> = {}) =>
      ok('POST', '/api/config/templates', {
        name: `tpl-${suffix()}`,
        platform: 'vendor_eos-gnmi',
        config_format: 'json',
        target_path: '/system/config',
        source: '{}',
        ...body,
      }),
    stack: (body: Record<string, unknown>) => ok('POST', '/api/config/stacks', { name: `stack-${suffix()}`, ...body }),
  };
}
