/**
 * Console, Snapshots and Templates pages: a snapshot started from the UI with a site filter queues
 * only that site's devices (checked through the API); the template editor shows a syntax error with
 * its line while the operator types, and drops it once fixed; a NETCONF replace with no target
 * path is refused with the API's advice, and saved once the operator picks merge. Headless
 * chromium, real controller.
 */
import { randomBytes } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHARED_NATS, dropNatsNamespace, enrollAgent, natsPrefix, startAgent, until } from '../agents/helpers';
import { api } from '../deployments/helpers';
import { startTestController, type TestController } from '../helpers/controller';
import { choose, launchBrowser, openPage, screenshot, signIn, textMatching } from './browser';
import { ensureConsoleBuilt } from './build';

const prefix = natsPrefix();
let c: TestController;
let user: Awaited<ReturnType<TestController['createOrgUser']>>;
let poolAgent: { stop(): Promise<void> } | null = null;
let browser: Browser;

async function device(name: string, siteId: string, profileId: string): Promise<string> {
  // Nothing listens on port 1: the backup fails, but the device is queued all the same.
  return (
    await api(c, user.token, 'POST', '/api/devices', { name, host: '127.0.0.1', device_type: 'generic', profile_id: profileId, site_id: siteId }, 201)
  ).id;
}

beforeAll(async () => {
  ensureConsoleBuilt();
  c = await startTestController({ config: { natsUrl: SHARED_NATS, natsPrefix: prefix, jobs: { sweepIntervalMs: 200 } } });
  user = await c.createOrgUser(['org_admin']);
  const { identity } = await enrollAgent(c, { orgId: user.orgId, token: user.token }, { name: 'pool-agent' });
  poolAgent = await startAgent(c, identity, { natsUrl: SHARED_NATS });
  browser = await launchBrowser();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await poolAgent?.stop();
  await c?.close();
  await dropNatsNamespace(SHARED_NATS, prefix);
});

describe('console snapshots', () => {
  it("starts a site-filtered snapshot: only that site's devices are queued", { timeout: 120_000 }, async () => {
    const profileId = (
      await api(
        c,
        user.token,
        'POST',
        '/api/profiles',
        { name: `p-${randomBytes(3).toString('hex')}`, username: 'admin', password: 'x-pass-1', ssh_port: 1 },
        201,
      )
    ).id;
    const east = (await api(c, user.token, 'POST', '/api/sites', { name: 'snap-east' }, 201)).id;
    const west = (await api(c, user.token, 'POST', '/api/sites', { name: 'snap-west' }, 201)).id;
    const eastIds = [await device('east-1', east, profileId), await device('east-2', east, profileId)];
    await device('west-1', west, profileId);

    const { page, problems, close } = await openPage(browser, c.url);
    try {
      await signIn(page, user.username, user.password);
      await page.getByRole('heading', { name: 'Sites' }).waitFor();
      await page.goto('/snapshots');
      await page.getByRole('heading', { name: 'Snapshots' }).waitFor();
      await page.getByLabel('Name').fill('east only');
      await choose(page, page.getByRole('textbox', { name: 'Site' }), 'snap-east');
      await page.getByRole('button', { name: 'Start snapshot of matching devices' }).click();
      await page.locator('[data-snapshot="east only"]').waitFor();
      await screenshot(page, 'snapshots-site-filter');

      const snap = await until('the snapshot to be listed', async () => {
        const list = await api(c, user.token, 'GET', '/api/devices/snapshots/');
        return (list.snapshots as { name: string }[]).find((s) => s.name === 'east only') as
          { id: string; total_devices: number; device_filter: { site_id?: string } } | undefined;
      });
      expect(snap.device_filter.site_id).toBe(east);
      expect(snap.total_devices).toBe(2);
      const backups = await api(c, user.token, 'GET', `/api/devices/snapshots/${snap.id}/backups`);
      expect((backups.backups as { device_id: string }[]).map((b) => b.device_id).sort()).toEqual([...eastIds].sort());
      expect(problems.errors, problems.errors.join('\n')).toEqual([]);
      expect(problems.failed, problems.failed.join('\n')).toEqual([]);
    } finally {
      await close();
    }
  });
});

describe('console template editor', () => {
  it('shows a syntax error with its line while typing, and drops it once fixed; nothing is saved', { timeout: 90_000 }, async () => {
    await api(
      c,
      user.token,
      'POST',
      '/api/config/templates',
      { name: 'syntax', platform: 'openconfig-gnmi', config_format: 'json', target_path: '/system/config', source: '{"hostname": "{{ hostname }}"}' },
      201,
    );
    const { page, problems, close } = await openPage(browser, c.url);
    try {
      await signIn(page, user.username, user.password);
      await page.getByRole('link', { name: 'Templates' }).click();
      await page.getByRole('button', { name: 'Edit syntax' }).click();
      const editor = page.getByRole('textbox', { name: 'Template source' });
      await textMatching(editor, /\{\{ hostname \}\}/, 'template source in the editor');
      await editor.click();
      await page.keyboard.press('Control+End');
      await page.keyboard.type('\n{{ broken y }}');
      const status = page.getByRole('status').filter({ hasText: 'Syntax error' });
      expect(await textMatching(status, /Line 2, column \d+: expected variable end/, 'the syntax error')).toContain('Line 2');
      await screenshot(page, 'template-syntax-error');
      for (let i = 0; i < '\n{{ broken y }}'.length; i++) await page.keyboard.press('Backspace');
      await status.waitFor({ state: 'detached' });
      const saved = await api(c, user.token, 'GET', '/api/config/templates');
      expect((saved as { name: string; current_version: number }[]).find((t) => t.name === 'syntax')?.current_version).toBe(1);
      expect(problems.errors, problems.errors.join('\n')).toEqual([]);
      expect(problems.failed, problems.failed.join('\n')).toEqual([]);
    } finally {
      await close();
    }
  });
});

describe('console template form', () => {
  it('shows why a NETCONF replace with no target path is not saved, and saves it as a merge', { timeout: 90_000 }, async () => {
    const { page, problems, close } = await openPage(browser, c.url);
    try {
      await signIn(page, user.username, user.password);
      await page.getByRole('link', { name: 'Templates' }).click();
      await page.getByRole('button', { name: 'New template' }).click();
      await page.getByRole('textbox', { name: 'Name' }).fill('eth0-mtu');
      await page.getByRole('textbox', { name: 'Platform' }).fill('ietf-netconf');
      await choose(page, page.getByRole('textbox', { name: 'Format' }), 'xml');
      const editor = page.getByRole('textbox', { name: 'Template source' });
      await editor.click();
      await page.keyboard.type('<interfaces xmlns="urn:x"><interface><name>eth0</name><mtu>{{ mtu }}</mtu></interface></interfaces>');
      await page.getByRole('button', { name: 'Create template' }).click();
      const alert = page.getByRole('alert').filter({ hasText: 'Not saved' });
      expect(await textMatching(alert, /A replace needs a target_path/, 'the refusal')).toContain('use operation merge');
      await screenshot(page, 'template-replace-refused');
      await choose(page, page.getByRole('textbox', { name: 'Operation' }), 'merge');
      await page.getByRole('button', { name: 'Create template' }).click();
      const saved = await until('the template to be saved', async () => {
        const list = (await api(c, user.token, 'GET', '/api/config/templates')) as { name: string; operation: string; target_path: string | null }[];
        return list.find((t) => t.name === 'eth0-mtu');
      });
      expect(saved).toMatchObject({ operation: 'merge', target_path: null });
      // The refused save is the one 400 the browser reports.
      const others = problems.errors.filter((e) => !/status of 400/.test(e));
      expect(others, others.join('\n')).toEqual([]);
    } finally {
      await close();
    }
  });
});
