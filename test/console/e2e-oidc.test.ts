/**
 * OIDC in the console, in Chromium against a real OpenID provider (oidc-provider on loopback):
 * a platform administrator tests the issuer from Admin → Settings before and after filling it in
 * (the client secret is never shown), then a fresh browser signs in with the single sign-on button
 * through the provider's login and consent pages and lands in the console as the new user, who has
 * no roles yet and is told so.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, startTestController, type TestController } from '../helpers/controller';
import { startOidcProvider, type TestOidcProvider } from '../helpers/oidc-provider';
import { launchBrowser, openPage, screenshot, signIn, textMatching } from './browser';
import { ensureConsoleBuilt } from './build';

let c: TestController;
let idp: TestOidcProvider;
let browser: Browser;

beforeAll(async () => {
  ensureConsoleBuilt();
  c = await startTestController();
  idp = await startOidcProvider({
    callbackUrl: `${c.url}/api/auth/oidc/callback`,
    accounts: { 'sub-olivia': { preferred_username: 'olivia', email: 'olivia@example.test', name: 'Olivia Oidc' } },
  });
  browser = await launchBrowser();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await idp?.close();
  await c?.close();
});

describe('OIDC in the console', () => {
  it('tests the issuer from the settings, then signs in with the single sign-on button', { timeout: 180_000 }, async () => {
    const admin = await openPage(browser, c.url);
    const { page } = admin;
    await signIn(page, ADMIN.username, ADMIN.password);
    await page.getByRole('heading', { name: 'Sites' }).waitFor();
    await page.getByRole('link', { name: 'Admin' }).click();
    await page.getByRole('tab', { name: 'Settings' }).click();
    const status = page.getByRole('status');

    await page.getByRole('button', { name: 'Test OIDC issuer' }).click();
    await textMatching(status, /OIDC is not configured: set oidc\.issuer and oidc\.client_id/, 'not configured');

    await page.getByLabel('oidc.issuer', { exact: true }).fill(idp.issuer);
    await page.getByLabel('oidc.client_id', { exact: true }).fill(idp.clientId);
    await page.getByLabel('oidc.client_secret', { exact: true }).fill(idp.clientSecret);
    await page.getByLabel('oidc.redirect_uris', { exact: true }).fill(JSON.stringify([`${c.url}/`]));
    await page.getByRole('button', { name: 'Save changes' }).click();
    await textMatching(status, /Saved 4 setting\(s\)/, 'saved');

    await page.getByRole('button', { name: 'Test OIDC issuer' }).click();
    const report = await textMatching(status, /Read the OpenID configuration/, 'issuer read');
    expect(report).toContain(`OIDC: Read the OpenID configuration of ${idp.issuer}.`);
    expect(report).toMatch(new RegExp(`Endpoints: authorization ${idp.issuer}/\\S+, token ${idp.issuer}/`));
    expect(report).toContain(`Register ${c.url}/api/auth/oidc/callback as a redirect URI at the provider.`);
    expect(await page.locator('main').textContent()).not.toContain(idp.clientSecret);
    expect(await page.getByLabel('oidc.client_secret', { exact: true }).inputValue()).toBe('');
    await screenshot(page, 'admin-oidc-test');
    expect(admin.problems.errors).toEqual([]);
    expect(admin.problems.failed).toEqual([]);
    await admin.close();

    // A fresh browser: the sign-in page offers single sign-on; the provider's pages sign Olivia in.
    const fresh = await openPage(browser, c.url);
    await fresh.page.goto('/');
    await fresh.page.getByRole('button', { name: 'Sign in with single sign-on' }).click();
    await fresh.page.waitForURL((url) => url.href.startsWith(idp.issuer));
    await fresh.page.locator('input[name="login"]').fill('sub-olivia');
    await fresh.page.locator('input[name="password"]').fill('any');
    await fresh.page.locator('button[type="submit"]').click();
    await fresh.page.waitForURL((url) => url.href.startsWith(c.url) || /\/interaction\//.test(url.pathname));
    if (fresh.page.url().startsWith(idp.issuer)) await fresh.page.locator('button[type="submit"]').click(); // consent
    await fresh.page.waitForURL((url) => url.href.startsWith(c.url));
    await textMatching(fresh.page.locator('header'), /Olivia Oidc/, 'signed in as the OIDC user');
    expect(fresh.page.url()).not.toContain('access_token'); // the fragment is read and cleared
    const users = await c.request('GET', '/api/admin/users?limit=500', { token: c.adminToken });
    expect(users.body.users.find((u: { username: string }) => u.username === 'olivia')).toMatchObject({ auth_provider: 'oidc' });
    // Olivia has no roles yet: the page says so instead of reporting an outage.
    expect(await textMatching(fresh.page.getByRole('alert'), /Ask an administrator to give you a role/, 'no roles note')).toContain('Not allowed');
    await screenshot(fresh.page, 'oidc-signed-in');
    await fresh.close();
  });
});
