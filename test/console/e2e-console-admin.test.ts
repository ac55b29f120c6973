/**
 * The console's user administration and instance editing end to end: headless chromium against a
 * real controller. A user created from the Admin page signs in from a fresh browser context; its
 * roles and enabled state change from the UI; an instance's name and variable values are edited
 * from the Instances page and read back through the API. API 400 messages show next to the forms.
 */
import { randomBytes } from 'node:crypto';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../deployments/helpers';
import { startTestController, type TestController } from '../helpers/controller';
import { launchBrowser, openPage, screenshot, signIn, textMatching, type PageProblems } from './browser';
import { ensureConsoleBuilt } from './build';

let c: TestController;
let admin: Awaited<ReturnType<TestController['createOrgUser']>>;
let browser: Browser;

async function session(): Promise<{ page: Page; problems: PageProblems; close(): Promise<void> }> {
  const opened = await openPage(browser, c.url);
  await signIn(opened.page, admin.username, admin.password);
  await opened.page.getByRole('heading', { name: 'Sites' }).waitFor();
  return opened;
}

/** Toggles one option of a Mantine MultiSelect (its wrapper takes the pointer, so the click is forced). */
async function toggleRole(page: Page, field: Locator, role: string): Promise<void> {
  await field.click({ force: true });
  await page.getByRole('option', { name: role, exact: true }).click();
  await page.keyboard.press('Escape');
}

beforeAll(async () => {
  ensureConsoleBuilt();
  c = await startTestController();
  admin = await c.createOrgUser(['org_admin']);
  browser = await launchBrowser();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await c?.close();
});

describe('console administration', () => {
  it('creates a user who then signs in; changes its roles and disables it', { timeout: 120_000 }, async () => {
    const username = `ui-${randomBytes(3).toString('hex')}`;
    const password = `Ui-pass-${randomBytes(6).toString('hex')}`;
    const { page, problems, close } = await session();
    await page.getByRole('link', { name: 'Admin' }).click();
    await page.getByRole('tab', { name: 'Users' }).click();
    const form = page.getByRole('form', { name: 'New user' });
    await form.getByLabel('New username').fill(username);
    await form.getByLabel("New user's password").fill('short');
    await form.getByRole('button', { name: 'Create user' }).click();
    expect(await textMatching(form.getByRole('alert'), /at least 12 characters/, 'weak password error')).toContain('User not created');

    await form.getByLabel("New user's password").fill(password);
    await toggleRole(page, form.getByRole('textbox', { name: 'Roles of the new user' }), 'operator');
    await form.getByRole('button', { name: 'Create user' }).click();
    await textMatching(form.getByRole('status'), new RegExp(`Created user ${username}`), 'created');
    expect(await form.getByLabel("New user's password").inputValue()).toBe('');
    const row = page.getByRole('table', { name: 'Users' }).getByRole('row', { name: new RegExp(username) });
    expect(await textMatching(row, /operator/, 'user row')).toContain('enabled');
    expect(await page.locator('main').textContent()).not.toContain(password);
    const { users } = await api(c, admin.token, 'GET', '/api/admin/users?limit=500');
    const created = users.find((u: { username: string }) => u.username === username);
    expect(created).toMatchObject({ roles: ['operator'], is_active: true, auth_provider: 'local' });

    // The new user signs in from a fresh browser context.
    const theirs = await openPage(browser, c.url);
    await signIn(theirs.page, username, password);
    await theirs.page.getByRole('heading', { name: 'Sites' }).waitFor();
    await theirs.close();

    // Roles: add auditor, drop operator.
    await row.getByRole('button', { name: `Edit ${username}` }).click();
    const edit = page.getByRole('form', { name: `Edit ${username}` });
    const roles = edit.getByRole('textbox', { name: 'Roles' });
    await toggleRole(page, roles, 'auditor');
    await toggleRole(page, roles, 'operator');
    await edit.getByRole('button', { name: 'Save user' }).click();
    await edit.waitFor({ state: 'detached' });
    expect(await textMatching(row, /auditor/, 'roles changed')).not.toContain('operator');
    expect((await api(c, admin.token, 'GET', `/api/admin/users/${created.id}`)).roles).toEqual(['auditor']);

    // Disabled: the user can no longer sign in.
    await row.getByRole('button', { name: `Edit ${username}` }).click();
    await edit.getByRole('switch', { name: 'Enabled' }).setChecked(false, { force: true });
    await edit.getByRole('button', { name: 'Save user' }).click();
    await textMatching(row, /disabled/, 'disabled');
    expect((await api(c, admin.token, 'GET', `/api/admin/users/${created.id}`)).is_active).toBe(false);
    const again = await openPage(browser, c.url);
    await signIn(again.page, username, password);
    expect(await textMatching(again.page.getByRole('alert'), /Sign-in failed/, 'sign-in refused')).not.toContain(password);
    await again.close();

    // An API 400 on the edit form is shown next to it (the caller cannot disable itself).
    const me = users.find((u: { username: string }) => u.username === admin.username);
    await page
      .getByRole('table', { name: 'Users' })
      .getByRole('button', { name: `Edit ${admin.username}` })
      .click();
    const mine = page.getByRole('form', { name: `Edit ${admin.username}` });
    await mine.getByRole('switch', { name: 'Enabled' }).setChecked(false, { force: true });
    await mine.getByRole('button', { name: 'Save user' }).click();
    expect(await textMatching(mine.getByRole('alert'), /cannot disable/i, 'self-disable error')).toContain('Not saved');
    expect((await api(c, admin.token, 'GET', `/api/admin/users/${me.id}`)).is_active).toBe(true);
    await screenshot(page, 'admin-users');
    expect(problems.errors.filter((e) => !/status of 400/.test(e))).toEqual([]);
    expect(problems.failed.every((f) => f.endsWith(' 400'))).toBe(true);
    await close();
  });

  it("edits an instance's name and variable values, read back through the API", { timeout: 120_000 }, async () => {
    const profile = await api(
      c,
      admin.token,
      'POST',
      '/api/profiles',
      { name: `p-${randomBytes(3).toString('hex')}`, username: 'admin', password: 'admin' },
      201,
    );
    const device = await api(
      c,
      admin.token,
      'POST',
      '/api/devices',
      { name: 'inst-dev', host: '192.0.2.10', device_type: 'vendor_eos', profile_id: profile.id },
      201,
    );
    const tpl = await api(
      c,
      admin.token,
      'POST',
      '/api/config/templates',
      {
        name: 'hostname',
        platform: 'openconfig-gnmi',
        config_format: 'json',
        target_path: '/system/config',
        source: '{"hostname": "{{ hostname }}"}',
      },
      201,
    );
    const stack = await api(
      c,
      admin.token,
      'POST',
      '/api/config/stacks',
      { name: 'inst-stack', services: [{ template_id: tpl.id, order: 0, variables: { hostname: 'one' } }] },
      201,
    );
    const instance = await api(
      c,
      admin.token,
      'POST',
      '/api/config/instances',
      {
        stack_id: stack.id,
        name: 'before-edit',
        target_devices: [{ device_id: device.id }],
        variable_values: { 0: { devices: [device.id], shared_vars: {}, device_vars: {} } },
      },
      201,
    );

    const { page, problems, close } = await session();
    await page.getByRole('link', { name: 'Instances' }).click();
    await page.getByRole('button', { name: 'Edit before-edit' }).click();
    const form = page.getByRole('form', { name: 'Edit instance before-edit' });
    const values = form.getByLabel('Variable values (JSON)');
    expect(JSON.parse(await values.inputValue())).toEqual(instance.variable_values);

    // Invalid JSON is caught before sending; a wrong shape gets the API's 400 message.
    await values.fill('{ not json');
    await form.getByRole('button', { name: 'Save changes' }).click();
    await textMatching(form.getByRole('alert'), /not valid JSON/, 'json error');
    await values.fill('{"0": 5}');
    await form.getByRole('button', { name: 'Save changes' }).click();
    expect(await textMatching(form.getByRole('alert'), /variable_values|must be/i, 'API 400')).toContain('Not saved');
    expect((await api(c, admin.token, 'GET', `/api/config/instances/${instance.id}`)).name).toBe('before-edit');

    const wanted = { 0: { devices: [device.id], shared_vars: { hostname: 'edited' }, device_vars: { [device.id]: { hostname: 'per-device' } } } };
    await form.getByLabel('Name', { exact: true }).fill('after-edit');
    await values.fill(JSON.stringify(wanted));
    await form.getByRole('button', { name: 'Save changes' }).click();
    await form.waitFor({ state: 'detached' });
    await page.getByRole('table', { name: 'Instances' }).getByRole('cell', { name: 'after-edit', exact: true }).waitFor();
    const stored = await api(c, admin.token, 'GET', `/api/config/instances/${instance.id}`);
    expect(stored).toMatchObject({ name: 'after-edit', variable_values: wanted, target_devices: [{ device_id: device.id }] });
    await screenshot(page, 'instances-edit');
    expect(problems.errors.filter((e) => !/status of 400/.test(e))).toEqual([]);
    expect(problems.failed.every((f) => f.endsWith(' 400'))).toBe(true);
    await close();
  });
});
