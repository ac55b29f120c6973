import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { until } from '../agents/helpers';
import { ROOT } from '../helpers/processes';

/** Debian's chromium; Playwright never downloads a browser here. */
export const CHROMIUM = process.env.CHROME_PATH ?? '/usr/bin/chromium';
export const SCREENSHOTS = join(ROOT, 'test-results/console');

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-dev-shm-usage'],
  });
}

/** What went wrong in a page: console errors, uncaught exceptions, failed and 4xx/5xx requests. */
export interface PageProblems {
  errors: string[];
  failed: string[];
}

/** A fresh browser context (its own sessionStorage) at 1280x800, watching for problems. */
export async function openPage(
  browser: Browser,
  baseUrl: string,
  viewport = { width: 1280, height: 800 },
): Promise<{ page: Page; problems: PageProblems; close(): Promise<void> }> {
  const context = await browser.newContext({ baseURL: baseUrl, viewport });
  const page = await context.newPage();
  const problems: PageProblems = { errors: [], failed: [] };
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.errors.push(msg.text());
  });
  page.on('pageerror', (err) => problems.errors.push(err.message));
  page.on('requestfailed', (req) => {
    // A WebSocket or fetch cut short by a navigation is not a failure of the page.
    if (req.failure()?.errorText !== 'net::ERR_ABORTED') problems.failed.push(`${req.method()} ${req.url()} ${req.failure()?.errorText}`);
  });
  page.on('response', (res) => {
    if (res.status() >= 400) problems.failed.push(`${res.request().method()} ${res.url()} ${res.status()}`);
  });
  return { page, problems, close: () => context.close() };
}

export async function signIn(page: Page, username: string, password: string): Promise<void> {
  await page.goto('/');
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

/** Waits until the locator's text matches (a guard against hanging, not a timed assertion). */
export async function textMatching(locator: Locator, pattern: RegExp, what: string, timeoutMs = 30_000): Promise<string> {
  return until(
    what,
    async () => {
      const text = (await locator.textContent({ timeout: 1_000 }).catch(() => null)) ?? '';
      return pattern.test(text) ? text : null;
    },
    timeoutMs,
    100,
  );
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** Picks an option of a Mantine Select or MultiSelect by its label. */
export async function choose(page: Page, field: Locator, option: string): Promise<void> {
  await field.click();
  await page.getByRole('option', { name: option, exact: true }).click();
}
