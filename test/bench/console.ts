/**
 * Console benchmark (`npm run bench -- console`): the operator console in headless Debian chromium
 * (playwright-core) against a controller in this process holding 10,000 devices, 50 sites and 100
 * agents. Prints the first page's JavaScript (gzipped), Playwright timings of the overview, the
 * device list's first paint, a page change, a filter and the device page (median of --runs), and
 * Lighthouse accessibility and best-practices scores of the overview, devices and device pages.
 *
 * `--waterfall` prints, for the first run, each step's requests with their start and end;
 * `--profile DIR` writes, for the first run, each step's CPU profiles: the page's (DIR/<step>.cpuprofile) and this
 * process's, where the controller runs (DIR/<step>.node.cpuprofile); open them in DevTools' Performance panel or
 * summarize one with `npx tsx test/bench/cpuprofile-top.ts FILE`;
 * `--no-lighthouse` leaves Lighthouse out (quicker while profiling).
 *
 * Targets: first page's JS ≤ 250 KB gzipped; devices first paint, page change and filter ≤ 300 ms;
 * overview ≤ 500 ms; Lighthouse accessibility and best practices ≥ 95.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { CDPSession, Page } from 'playwright-core';
import { CONSOLE_DIST } from '../../controller/src/console/plugin';
import { CHROMIUM, launchBrowser } from '../console/browser';
import { ensureConsoleBuilt } from '../console/build';
import { ADMIN } from '../helpers/controller';
import { benchController, option } from './controller';
import { median } from './report';
import { inventoryCsv } from './inventory';

/** The JavaScript index.html loads before the first page can render: its entry and modulepreloads. */
export function firstPageScripts(html: string): string[] {
  const found = [...html.matchAll(/<script[^>]+src="([^"]+\.js)"|<link[^>]+rel="modulepreload"[^>]+href="([^"]+\.js)"/g)];
  // A chunk both entries import is listed once per entry: count it once.
  return [...new Set(found.map((m) => m[1] ?? m[2]))];
}

function firstPageJsGzipped(): { files: number; raw: number; gzipped: number } {
  const scripts = firstPageScripts(readFileSync(join(CONSOLE_DIST, 'index.html'), 'utf8'));
  let raw = 0;
  let gzipped = 0;
  for (const src of scripts) {
    const body = readFileSync(join(CONSOLE_DIST, src));
    raw += body.length;
    gzipped += gzipSync(body).length;
  }
  return { files: scripts.length, raw, gzipped };
}

const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;

/**
 * Requests a page sends, each with when it started and ended (ms, performance.now()) and the wait
 * for the first byte of the answer (server time plus queueing). Finished requests carry the
 * browser's own times: this process, which also runs the controller, may hear of them late.
 */
interface Fetched {
  url: string;
  start: number;
  end: number | null;
  wait: number | null;
  failed: boolean;
}

function recordRequests(page: Page): Fetched[] {
  const seen = new Map<object, Fetched>();
  const list: Fetched[] = [];
  page.on('request', (r) => {
    const entry = { url: r.url(), start: performance.now(), end: null, wait: null, failed: false };
    seen.set(r, entry);
    list.push(entry);
  });
  page.on('requestfinished', (r) => {
    const e = seen.get(r);
    if (!e) return;
    const t = r.timing();
    if (t.responseEnd < 0) return void (e.end = performance.now());
    e.start = t.startTime - performance.timeOrigin;
    e.end = e.start + t.responseEnd;
    if (t.requestStart >= 0 && t.responseStart >= 0) e.wait = t.responseStart - t.requestStart;
  });
  page.on('requestfailed', (r) => {
    const e = seen.get(r);
    if (e) {
      e.end = performance.now();
      e.failed = true;
    }
  });
  return list;
}

/** The requests of one timed step (--waterfall): start and end relative to the step's start. */
function printWaterfall(what: string, requests: Fetched[], from: number, total: number): void {
  console.log(`  ${what}: ${Math.round(total)} ms`);
  for (const r of requests.filter((x) => x.start >= from && x.start <= from + total)) {
    const path = r.url
      .replace(/^https?:\/\/[^/]+/, '')
      .replace(/#.*/, '')
      .slice(0, 90);
    const end = r.end === null ? 'open' : `${Math.round(r.end - from)}`;
    const wait = r.wait === null ? '' : `(first byte after ${Math.round(r.wait)}) `;
    console.log(`    ${String(Math.round(r.start - from)).padStart(5)} → ${end.padStart(5)} ms  ${wait}${r.failed ? '(cancelled) ' : ''}${path}`);
  }
}

/** What the first run records of each step (--waterfall, --profile). */
interface StepRecording {
  what: string;
  requests?: Fetched[];
  profile?: { cdp: CDPSession; node: Session; dir: string };
}

/** Milliseconds from the action until `ready` resolves; prints the step's waterfall, writes its CPU profile when asked. */
async function timed(action: () => Promise<unknown>, ready: () => Promise<unknown>, record?: StepRecording): Promise<number> {
  if (record?.profile) await Promise.all([record.profile.cdp.send('Profiler.start'), record.profile.node.post('Profiler.start')]);
  const start = performance.now();
  await action();
  await ready();
  const took = performance.now() - start;
  if (record?.requests) printWaterfall(record.what, record.requests, start, took);
  if (record?.profile) {
    const file = join(record.profile.dir, record.what.replace(/\W+/g, '-'));
    writeFileSync(`${file}.cpuprofile`, JSON.stringify((await record.profile.cdp.send('Profiler.stop')).profile));
    writeFileSync(`${file}.node.cpuprofile`, JSON.stringify((await record.profile.node.post('Profiler.stop')).profile));
  }
  return took;
}

async function seed(c: Awaited<ReturnType<typeof benchController>>, devices: number, sites: number, agentsPerSite: number): Promise<void> {
  const profile = (await c.call('POST', '/api/profiles', { name: 'bench', username: 'netops', password: 'bench-password' })).body;
  await c.call('POST', `/api/devices/import/csv?profile_id=${profile.id}`, inventoryCsv(devices), 'text/csv');
  for (let s = 0; s < sites; s++) {
    const name = `site-${String(s).padStart(2, '0')}`;
    const site = (await c.call('POST', '/api/sites', { name })).body;
    for (let a = 0; a < agentsPerSite; a++) await c.call('POST', '/api/agents', { name: `${name}-agent-${a}`, site_id: site.id });
    const ids: string[] = [];
    for (let offset = 0; ; offset += 100) {
      const page = (await c.call('GET', `/api/devices?site=${name}&limit=100&offset=${offset}`)).body;
      ids.push(...page.devices.map((d: { id: string }) => d.id));
      if (offset + 100 >= page.total) break;
    }
    if (ids.length) await c.call('PATCH', '/api/devices/bulk', { ids, fields: { site_id: site.id } });
  }
}

/**
 * The console takes tokens from a URL fragment only in a tab that pressed its single sign-on
 * button (not a link from someone else: login CSRF); what that button leaves in the tab's
 * sessionStorage, for a script run at each page load in the benchmark's tabs.
 */
const SSO_STARTED = "sessionStorage.setItem('switchboard.sso-started', String(Date.now()))";

/** A console URL that signs in from the fragment, as after an OIDC sign-in (in a tab running SSO_STARTED first). */
async function signedInUrl(base: string, path: string): Promise<string> {
  const res = await fetch(`${base}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
  const pair = (await res.json()) as { access_token: string; refresh_token: string; expires_in: number };
  return `${base}${path}#access_token=${pair.access_token}&refresh_token=${pair.refresh_token}&expires_in=${pair.expires_in}`;
}

async function timings(base: string, runs: number, waterfall: boolean, profileDir?: string): Promise<Record<string, number[]>> {
  const browser = await launchBrowser();
  const node = new Session();
  if (profileDir) {
    node.connect();
    await node.post('Profiler.enable');
    await node.post('Profiler.setSamplingInterval', { interval: 200 });
  }
  const out: Record<string, number[]> = { overview: [], devicesFirstPaint: [], pageChange: [], filter: [], devicePage: [] };
  try {
    for (let r = 0; r < runs; r++) {
      // String predicates are evaluated in the page, which the console's CSP (no eval) would refuse.
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, bypassCSP: true });
      await context.addInitScript(SSO_STARTED);
      const page: Page = await context.newPage();
      const requests = recordRequests(page);
      let cdp: CDPSession | undefined;
      if (profileDir && r === 0) {
        cdp = await context.newCDPSession(page);
        await cdp.send('Profiler.enable');
        await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
      }
      // --waterfall, --profile: the first run prints each step's requests, writes its CPU profile.
      const w = (what: string): StepRecording | undefined =>
        r === 0 && (waterfall || cdp)
          ? { what, requests: waterfall ? requests : undefined, profile: cdp && profileDir ? { cdp, node, dir: profileDir } : undefined }
          : undefined;
      const url = await signedInUrl(base, '/');
      out.overview.push(
        await timed(
          () => page.goto(url),
          () =>
            page.waitForFunction(
              "document.querySelectorAll('section[data-site]').length >= 51 && document.querySelectorAll('tr[data-agent]').length >= 100",
            ),
          w('overview'),
        ),
      );
      const rows = page.locator('table[aria-label="Devices"] tbody tr');
      out.devicesFirstPaint.push(
        await timed(
          () => page.getByRole('link', { name: 'Devices' }).click(),
          () => rows.nth(49).waitFor(),
          w('devices first paint'),
        ),
      );
      const firstName = async () => rows.first().locator('td').nth(1).textContent();
      const before = await firstName();
      out.pageChange.push(
        await timed(
          () => page.getByRole('button', { name: 'Page 2', exact: true }).click(),
          () =>
            page.waitForFunction(
              `document.querySelector('table[aria-label="Devices"] tbody tr td:nth-child(2)')?.textContent !== ${JSON.stringify(before)}`,
            ),
          w('page change'),
        ),
      );
      const vendor = page.getByRole('textbox', { name: 'Vendor' });
      await vendor.fill('Juniper');
      out.filter.push(
        await timed(
          () => vendor.press('Enter'),
          () =>
            page.waitForFunction(
              `[...document.querySelectorAll('table[aria-label="Devices"] tbody tr td:nth-child(5)')].every((c) => c.textContent === ` +
                `'Juniper') && document.querySelectorAll('table[aria-label="Devices"] tbody tr').length > 0`,
            ),
          w('vendor filter'),
        ),
      );
      out.devicePage.push(
        await timed(
          () => rows.first().getByRole('link').click(),
          () => page.getByRole('tab', { name: 'Backups' }).waitFor(),
          w('device page'),
        ),
      );
      await context.close();
    }
  } finally {
    if (profileDir) node.disconnect();
    await browser.close();
  }
  return out;
}

interface LighthouseScores {
  accessibility: number;
  bestPractices: number;
}

async function lighthouseScores(urls: Record<string, string>): Promise<Record<string, LighthouseScores> | string> {
  let lighthouse: typeof import('lighthouse').default;
  let launcher: typeof import('chrome-launcher');
  let puppeteer: typeof import('puppeteer-core').default;
  try {
    lighthouse = (await import('lighthouse')).default;
    launcher = await import('chrome-launcher');
    puppeteer = (await import('puppeteer-core')).default;
  } catch {
    return 'lighthouse is not installed (npm ci installs it as a devDependency)';
  }
  const chrome = await launcher.launch({
    chromePath: CHROMIUM,
    chromeFlags: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-dev-shm-usage'],
  });
  const scores: Record<string, LighthouseScores> = {};
  // A page of our own for each audit, so that it runs SSO_STARTED before the console reads the fragment.
  const browser = await puppeteer.connect({ browserURL: `http://127.0.0.1:${chrome.port}` });
  try {
    for (const [name, url] of Object.entries(urls)) {
      const page = await browser.newPage();
      await page.evaluateOnNewDocument(SSO_STARTED);
      const result = await lighthouse(
        url,
        {
          port: chrome.port,
          output: 'json',
          logLevel: 'error',
          onlyCategories: ['accessibility', 'best-practices'],
          formFactor: 'desktop',
          screenEmulation: { mobile: false, width: 1280, height: 800, deviceScaleFactor: 1, disabled: false },
        },
        undefined,
        page,
      );
      await page.close();
      const categories = result?.lhr.categories ?? {};
      scores[name] = {
        accessibility: Math.round((categories.accessibility?.score ?? 0) * 100),
        bestPractices: Math.round((categories['best-practices']?.score ?? 0) * 100),
      };
      const failing = Object.values(result?.lhr.audits ?? {})
        .filter((a) => a.score !== null && a.score < 1 && (a.scoreDisplayMode === 'binary' || a.scoreDisplayMode === 'numeric'))
        .map((a) => a.id);
      if (failing.length) console.log(`  lighthouse ${name}: audits below full marks: ${failing.slice(0, 12).join(', ')}`);
      for (const id of failing) {
        const items = (
          (result?.lhr.audits[id]?.details as { items?: { node?: { snippet?: string; explanation?: string } }[] } | undefined)?.items ?? []
        ).slice(0, 4);
        for (const item of items)
          if (item.node) console.log(`    ${id}: ${item.node.snippet?.slice(0, 140)} ${item.node.explanation?.split('\n')[1] ?? ''}`);
      }
    }
  } finally {
    await browser.disconnect();
    chrome.kill();
  }
  return scores;
}

export async function run(args: string[]): Promise<void> {
  const devices = option(args, 'devices', 10_000);
  const runs = option(args, 'runs', 5);
  ensureConsoleBuilt();
  const js = firstPageJsGzipped();
  console.log(`first page JavaScript: ${js.files} files, ${kb(js.raw)} raw, ${kb(js.gzipped)} gzipped (target ≤ 250 KB)`);

  const c = await benchController({}, { applicationName: 'console-bench' });
  try {
    const start = performance.now();
    await seed(c, devices, 50, 2);
    console.log(`seeded ${devices} devices, 50 sites, 100 agents in ${((performance.now() - start) / 1000).toFixed(1)} s`);
    const profileAt = args.indexOf('--profile');
    const profileDir = profileAt >= 0 ? args[profileAt + 1] : undefined;
    if (profileDir) mkdirSync(profileDir, { recursive: true });
    const t = await timings(c.base, runs, args.includes('--waterfall'), profileDir);
    const rows: [string, number[], number][] = [
      ['overview, 50 sites / 100 agents (full load)', t.overview, 500],
      ['devices: first paint (route change)', t.devicesFirstPaint, 300],
      ['devices: page change', t.pageChange, 300],
      ['devices: vendor filter', t.filter, 300],
      ['device page (route change)', t.devicePage, 300],
    ];
    console.log(`\n| measure (${devices} devices, median of ${runs}) | ms | target |\n|---|---|---|`);
    for (const [what, values, target] of rows) console.log(`| ${what} | ${Math.round(median(values))} | ≤ ${target} |`);

    if (args.includes('--no-lighthouse')) return;
    const deviceId = (await c.call('GET', '/api/devices?limit=1')).body.devices[0].id;
    const scores = await lighthouseScores({
      overview: await signedInUrl(c.base, '/'),
      devices: await signedInUrl(c.base, '/devices'),
      device: await signedInUrl(c.base, `/devices/${deviceId}`),
    });
    if (typeof scores === 'string') console.log(`\nlighthouse: ${scores}`);
    else {
      console.log('\n| Lighthouse | accessibility | best practices |\n|---|---|---|');
      for (const [name, s] of Object.entries(scores)) console.log(`| ${name} | ${s.accessibility} | ${s.bestPractices} |`);
    }
  } finally {
    await c.close();
  }
}
