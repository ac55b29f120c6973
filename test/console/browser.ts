import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { until } from '../agents/helpers';
import { ROOT } from '../helpers/processes';
import { contrastRatio, over, parseRgba, type Rgba } from './contrast';

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

/** How a page is opened: the window's size and the colour scheme the "OS" prefers. */
export interface PageOptions {
  viewport?: { width: number; height: number };
  colorScheme?: 'light' | 'dark';
}

/** A fresh browser context (its own sessionStorage), by default 1280x800 and light, watching for problems. */
export async function openPage(
  browser: Browser,
  baseUrl: string,
  { viewport = { width: 1280, height: 800 }, colorScheme = 'light' }: PageOptions = {},
): Promise<{ page: Page; problems: PageProblems; close(): Promise<void> }> {
  const context = await browser.newContext({ baseURL: baseUrl, viewport, colorScheme });
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

/**
 * The WCAG contrast ratio of each matching element's text against what is drawn behind it: the
 * element's and its ancestors' backgrounds, translucent tints laid over the first opaque one.
 */
export async function textContrasts(page: Page, selector: string): Promise<{ text: string; ratio: number }[]> {
  // Only computed styles are read in the page (no helper functions: tsx would name them with a helper the page lacks).
  // Typed here by hand: the tests compile without the DOM library.
  type InPage = { textContent: string | null; parentElement: InPage | null };
  const seen = await page.locator(selector).evaluateAll((elements: InPage[]) => {
    const style = (globalThis as unknown as { getComputedStyle(e: InPage): { color: string; backgroundColor: string } }).getComputedStyle;
    return elements.map((el) => {
      const backgrounds: string[] = [];
      for (let e: InPage | null = el; e; e = e.parentElement) backgrounds.push(style(e).backgroundColor);
      return { text: el.textContent ?? '', color: style(el).color, backgrounds };
    });
  });
  return seen.map(({ text, color, backgrounds }) => {
    const behind = backgrounds.reduceRight((below, css) => over(parseRgba(css), below), [255, 255, 255, 1] as Rgba);
    return { text, ratio: contrastRatio(over(parseRgba(color), behind), behind) };
  });
}
