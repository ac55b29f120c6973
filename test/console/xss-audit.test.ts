/**
 * The console against a hostile network and a hostile co-tenant, in headless chromium against a
 * real controller, agent and SSH simulator:
 *
 * - markup planted in everything the console shows (names, descriptions, a device's running config
 *   and its diff, LLDP neighbors, an agent's reported version, deployment logs and errors, ...)
 *   through the real API and the real agent is shown as text on every page: no element of it
 *   reaches the DOM and no script runs (the CSP would refuse inline script, so the test looks for
 *   the injected elements themselves, not only for a script's effect);
 * - a link carrying someone else's token pair in its fragment (what the OIDC callback sends back)
 *   does not sign the operator in as that someone (login CSRF): only a sign-in this tab started
 *   with the single sign-on button takes tokens from the fragment.
 *
 * Screenshots go to test-results/console/xss-*.png.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRIVERS } from '../../agent/src/drivers';
import { enroll } from '../../agent/src/identity';
import { natsAgentLink } from '../../agent/src/nats-link';
import { SSO_PENDING_MS, SSO_STARTED_KEY, fragmentTokens } from '../../controller/console/src/auth/fragment';
import { AgentRuntime, capabilitiesOf } from '../../agent/src/runtime';
import { SHARED_NATS, dropNatsNamespace, natsPrefix, until } from '../agents/helpers';
import { api, waitFor } from '../deployments/helpers';
import { startTestController, type TestController } from '../helpers/controller';
import { startSshDevice, type SimSshDevice } from '../sim/ssh';
import { clearSimNetwork, registerSimNetwork } from '../sim/ssh/discovery-data';
import { launchBrowser, openPage, screenshot, signIn, textMatching, type PageProblems } from './browser';
import { ensureConsoleBuilt } from './build';

/**
 * Markup tagged by where it was planted: an attribute breakout, then an element with an inline
 * handler that would set window.__pwned. No spaces or dots: device CLIs cut a neighbor's name there.
 */
const hostile = (tag: string) => `${tag}"'><img/data-pwned/src/onerror=__pwned=1>`;

const prefix = natsPrefix();
let c: TestController;
let user: Awaited<ReturnType<TestController['createOrgUser']>>;
let browser: Browser;
let agent: AgentRuntime | null = null;
let sim: SimSshDevice | null = null;
const ids: Record<string, string> = {};

type Session = { page: Page; problems: PageProblems; close(): Promise<void> };

async function session(): Promise<Session> {
  const opened = await openPage(browser, c.url);
  await signIn(opened.page, user.username, user.password);
  await opened.page.getByRole('heading', { name: 'Sites' }).waitFor();
  return opened;
}

/** Nothing planted became markup or ran, and the page showed no errors (a refused inline handler is one). */
async function assertInert(s: Session, what: string): Promise<void> {
  await s.page.waitForLoadState('networkidle').catch(() => undefined);
  await screenshot(s.page, `xss-${what}`);
  expect(await s.page.locator('[data-pwned]').count(), `${what}: injected elements`).toBe(0);
  expect(await s.page.evaluate(() => (globalThis as { __pwned?: unknown }).__pwned), `${what}: script ran`).toBeUndefined();
  expect(s.problems.errors, `${what}: console errors`).toEqual([]);
  expect(s.problems.failed, `${what}: failed requests`).toEqual([]);
}

/** Waits until the page (modals included, they are portalled out of main) shows each planted value as text. */
async function shows(page: Page, what: string, tags: string[]): Promise<void> {
  let missing: string[] = tags;
  try {
    await until(
      `${what} to show the planted values literally`,
      async () => {
        const text = (await page.locator('body').textContent()) ?? '';
        missing = tags.filter((t) => !text.includes(hostile(t)));
        return missing.length === 0;
      },
      30_000,
    );
  } catch (err) {
    await screenshot(page, `xss-${what.replaceAll(' ', '-')}-missing`);
    throw new Error(`${(err as Error).message}; missing: ${missing.join(', ')}`, { cause: err });
  }
}

/** The user the header's account button names once /api/auth/me answered, or 'signed out' when the sign-in form shows. */
async function whoIsSignedIn(page: Page, candidates: string[]): Promise<string> {
  try {
    return await until(
      'the sign-in form or a signed-in header',
      async () => {
        if (await page.getByRole('button', { name: 'Sign in', exact: true }).isVisible()) return 'signed out';
        const header =
          (await page
            .locator('header')
            .textContent({ timeout: 1_000 })
            .catch(() => null)) ?? '';
        return candidates.find((name) => header.includes(name));
      },
      30_000,
    );
  } catch (err) {
    await screenshot(page, 'xss-who-is-signed-in-timeout');
    throw err;
  }
}

beforeAll(async () => {
  ensureConsoleBuilt();
  c = await startTestController({
    config: { natsUrl: SHARED_NATS, natsPrefix: prefix, jobs: { sweepIntervalMs: 200 }, deployments: { sweepIntervalMs: 200, staleMs: 300 } },
  });
  user = await c.createOrgUser(['org_admin']);
  browser = await launchBrowser();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await agent?.stop(2_000);
  await sim?.close();
  clearSimNetwork();
  await c?.close();
  await dropNatsNamespace(SHARED_NATS, prefix);
});

describe('console against hostile data', () => {
  it('plants markup through the API, the agent and the device', { timeout: 240_000 }, async () => {
    const token = user.token;
    // An agent names itself and reports its own version.
    const created = await api(c, token, 'POST', '/api/agents', { name: hostile('agent'), site_id: null }, 201);
    const identity = await enroll(
      {
        controllerUrl: c.url,
        enrollToken: created.enrollment_token,
        natsUrl: SHARED_NATS,
        stateDir: mkdtempSync(join(tmpdir(), 'sb-xss-agent-')),
        concurrency: 8,
        connectConcurrency: 8,
        logLevel: 'silent',
      },
      hostile('ver'),
      capabilitiesOf(DRIVERS),
    );
    // Its heartbeats report the version too.
    agent = new AgentRuntime({
      identity,
      link: await natsAgentLink(SHARED_NATS, identity),
      drivers: DRIVERS,
      concurrency: 8,
      connectConcurrency: 8,
      version: hostile('ver'),
      log: pino({ level: 'silent' }),
    });
    await agent.start();

    const site = await api(c, token, 'POST', '/api/sites', { name: hostile('site') }, 201);
    sim = await startSshDevice({ hostname: 'xss-sw1', password: 'sim-pass-1' });
    const profile = await api(
      c,
      token,
      'POST',
      '/api/profiles',
      { name: hostile('prof'), username: 'admin', password: 'sim-pass-1', ssh_port: sim.port },
      201,
    );
    const device = await api(
      c,
      token,
      'POST',
      '/api/devices',
      {
        name: hostile('dev'),
        host: sim.host,
        device_type: sim.deviceType,
        profile_id: profile.id,
        site_id: site.id,
        manufacturer: hostile('mfr'),
        model: hostile('model'),
        description: hostile('desc'),
      },
      201,
    );
    ids.device = device.id;

    // Its running config, twice (a diff between them), a banner and a description among the lines.
    const lines = sim.config().split('\n');
    const at = lines.findIndex((l) => l.startsWith('hostname'));
    lines.splice(at + 1, 0, `banner motd ^${hostile('banner')}^`);
    sim.setConfig(lines.join('\n'));
    const pull = async (version: number) => {
      const pulled = await api(c, token, 'POST', `/api/config/devices/${device.id}/pull?method=cli`, undefined, 201);
      expect(pulled.versions).toEqual([expect.objectContaining({ version, status: 'success' })]);
    };
    await pull(1);
    lines.splice(at + 2, 0, `snmp-server location ${hostile('diff')}`);
    sim.setConfig(lines.join('\n'));
    await pull(2);

    // Its LLDP/CDP neighbor names itself.
    registerSimNetwork(
      [{ hostname: 'xss-sw1', deviceType: sim.deviceType, address: sim.host }],
      [{ a: 'xss-sw1', aPort: 1, b: hostile('peer'), bPort: 1 }],
    );
    const queued = await api(c, token, 'POST', `/api/devices/${device.id}/poll`, undefined, 202);
    await until(
      'poll finished',
      async () => {
        const history = await api(c, token, 'GET', `/api/devices/${device.id}/poll-history`);
        return history.polls.find((p: { id: string; status: string }) => p.id === queued.poll_id && !['queued', 'running'].includes(p.status));
      },
      90_000,
    );

    // Templates, stacks, variables, deployments, instances, tasks, snapshots.
    const template = await api(
      c,
      token,
      'POST',
      '/api/config/templates',
      {
        name: hostile('tpl'),
        platform: 'vendor_xe-netconf',
        config_format: 'cli',
        source: `! ${hostile('tsrc')}\nsnmp-server contact {{ contact }}\n`,
      },
      201,
    );
    const stack = await api(
      c,
      token,
      'POST',
      '/api/config/stacks',
      {
        name: hostile('stack'),
        description: hostile('sdesc'),
        services: [{ template_id: template.id, order: 0, variables: { contact: hostile('var') } }],
      },
      201,
    );
    ids.stack = stack.id;
    const deployment = await api(
      c,
      token,
      'POST',
      '/api/config/deployments',
      { stack_id: stack.id, name: hostile('depl'), target_devices: [{ device_id: device.id }] },
      201,
    );
    ids.deployment = deployment.id;
    await waitFor(c, token, deployment.id, ['completed', 'failed'], 120_000);
    await api(
      c,
      token,
      'POST',
      '/api/config/instances',
      {
        stack_id: stack.id,
        name: hostile('inst'),
        target_devices: [{ device_id: device.id }],
        variable_values: { '0': { devices: [device.id], shared_vars: { contact: hostile('ivar') }, device_vars: {} } },
      },
      201,
    );
    await api(c, token, 'POST', '/api/tasks/', { name: hostile('task'), type: 'backup', cron: '0 2 * * *' }, 201);
    const snapshot = await api(c, token, 'POST', '/api/devices/snapshots/', { name: hostile('snap') }, 201);
    await api(c, token, 'POST', `/api/devices/snapshots/${snapshot.snapshot.id}/collect`, {}, 202);
  });

  it('shows every planted value as text on the overview, agents, devices and device pages', { timeout: 180_000 }, async () => {
    const s = await session();
    const { page } = s;
    await shows(page, 'overview', ['site', 'agent', 'ver', 'snap']);
    await assertInert(s, 'overview');

    await page.getByRole('link', { name: 'Agents' }).click();
    await shows(page, 'agents', ['agent', 'ver', 'site']);
    await assertInert(s, 'agents');

    await page.getByRole('link', { name: 'Devices' }).click();
    await shows(page, 'devices', ['dev', 'mfr', 'model', 'site']);
    await assertInert(s, 'devices');

    await page.goto(`/devices/${ids.device}`);
    await shows(page, 'device', ['dev', 'mfr', 'model', 'prof']);
    await page.getByRole('button', { name: 'View version 2' }).click();
    await shows(page, 'config text', ['banner', 'diff']);
    await assertInert(s, 'device-config');
    await page.keyboard.press('Escape');
    await page.getByLabel('Compare version 1').check();
    await page.getByLabel('Compare version 2').check();
    await page.getByRole('button', { name: 'Compare selected' }).click();
    await shows(page, 'diff', ['diff']);
    await page.getByRole('dialog').getByText('Side by side', { exact: true }).click();
    await shows(page, 'side-by-side diff', ['diff']);
    await assertInert(s, 'device-diff');
    await page.keyboard.press('Escape');
    await page.getByRole('tab', { name: 'Discovery' }).click();
    await page.getByRole('tab', { name: 'Neighbors' }).click();
    await shows(page, 'neighbors', ['peer']);
    await assertInert(s, 'device-neighbors');
    await s.close();
  });

  it(
    'shows every planted value as text on the snapshot, topology, template, stack, deployment, task and profile pages',
    { timeout: 180_000 },
    async () => {
      const s = await session();
      const { page } = s;
      await page.getByRole('link', { name: 'Snapshots' }).click();
      await shows(page, 'snapshots', ['snap']);
      await page.getByRole('button', { name: 'Show devices' }).click();
      await shows(page, 'snapshot outcomes', ['dev']);
      await assertInert(s, 'snapshots');

      await page.getByRole('link', { name: 'Topology' }).click();
      await page.getByText(/nodes, \d+ links/).click();
      await shows(page, 'topology links', ['peer']);
      await assertInert(s, 'topology');

      await page.getByRole('link', { name: 'Templates' }).click();
      await shows(page, 'templates', ['tpl']);
      await page.getByRole('button', { name: `Edit ${hostile('tpl')}` }).click();
      await textMatching(page.getByRole('textbox', { name: 'Template source' }), /tsrc/, 'template source in the editor');
      await shows(page, 'template editor', ['tsrc']);
      await page.getByLabel('Variables (JSON)').fill(JSON.stringify({ contact: hostile('pvar') }));
      await page.getByRole('button', { name: 'Render preview' }).click();
      await textMatching(page.getByTestId('render-result'), /pvar/, 'rendered preview');
      await shows(page, 'render preview', ['tsrc', 'pvar']);
      await assertInert(s, 'templates');
      await page.keyboard.press('Escape');

      await page.getByRole('link', { name: 'Stacks' }).click();
      await shows(page, 'stacks', ['stack', 'sdesc']);
      await page.getByRole('button', { name: 'Render preview' }).click();
      const picker = page.getByRole('textbox', { name: `Preview ${hostile('stack')} for device` });
      await picker.click();
      await page.getByRole('option', { name: hostile('dev') }).click();
      await page.getByRole('button', { name: 'Render', exact: true }).click();
      await shows(page, 'stack render', ['tpl', 'dev', 'tsrc', 'var']);
      await assertInert(s, 'stacks');

      await page.getByRole('link', { name: 'Deployments' }).click();
      await shows(page, 'deployments', ['depl']);
      await page.getByRole('link', { name: hostile('depl') }).click();
      await shows(page, 'deployment', ['depl', 'dev']);
      await textMatching(page.getByTestId('deployment-log'), /\S/, 'deployment log');
      await assertInert(s, 'deployment');

      await page.getByRole('link', { name: 'Instances' }).click();
      await shows(page, 'instances', ['inst']);
      await page.getByRole('button', { name: `Edit ${hostile('inst')}` }).click();
      await shows(page, 'instance editor', ['inst']);
      expect(await page.getByLabel('Variable values (JSON)').inputValue()).toContain(JSON.stringify(hostile('ivar')).slice(1, -1));
      await assertInert(s, 'instances');

      await page.getByRole('link', { name: 'Scheduled tasks' }).click();
      await shows(page, 'tasks', ['task']);
      await assertInert(s, 'tasks');

      await page.getByRole('link', { name: 'Profiles', exact: true }).click();
      await shows(page, 'profiles', ['prof', 'site']);
      await page.getByRole('button', { name: `Edit profile ${hostile('prof')}` }).click();
      expect(await page.getByRole('dialog').getByRole('textbox', { name: 'Name', exact: true }).inputValue()).toBe(hostile('prof'));
      await page.keyboard.press('Escape');
      await assertInert(s, 'profiles');

      await page.getByRole('link', { name: 'Admin' }).click();
      await page.getByRole('tab', { name: 'Audit log' }).click();
      await page.getByRole('table', { name: 'Audit log' }).waitFor();
      await assertInert(s, 'admin-audit');
      await s.close();
    },
  );
});

describe('console sign-in from a link', () => {
  it('takes fragment tokens only after this tab pressed the single sign-on button, recently', () => {
    const hash = '#access_token=a.b.c&refresh_token=r1&token_type=Bearer&expires_in=900';
    const pressed = 1_000_000;
    expect(fragmentTokens('', null, pressed)).toBe('none');
    expect(fragmentTokens('#section', String(pressed), pressed)).toBe('none');
    // A link from anyone: refused (and, by the caller, cleared from the address bar).
    expect(fragmentTokens(hash, null, pressed)).toBe('refused');
    expect(fragmentTokens(hash, 'not a time', pressed)).toBe('refused');
    expect(fragmentTokens(hash, String(pressed), pressed + SSO_PENDING_MS + 1)).toBe('refused');
    expect(fragmentTokens(hash, String(pressed), pressed - 1)).toBe('refused');
    expect(fragmentTokens('#access_token=a.b.c', String(pressed), pressed)).toBe('refused');
    // The callback's answer to this tab's own sign-on.
    expect(fragmentTokens(hash, String(pressed), pressed + 5_000)).toEqual({ access_token: 'a.b.c', refresh_token: 'r1', expires_in: 900 });
    expect(fragmentTokens('#access_token=a&refresh_token=r&expires_in=soon', String(pressed), pressed)).toMatchObject({ expires_in: 3600 });
  });

  it("does not sign in with another user's tokens from a link's fragment (login CSRF)", { timeout: 120_000 }, async () => {
    // The attacker: any account on this controller, here an administrator of another organization.
    const attacker = await c.createOrgUser(['org_admin']);
    const pair = (await c.login(attacker.username, attacker.password)).body as { access_token: string; refresh_token: string; expires_in: number };
    const lure = (path: string) =>
      `${path}#access_token=${pair.access_token}&refresh_token=${pair.refresh_token}&token_type=Bearer&expires_in=${pair.expires_in}`;
    const names = [attacker.username, user.username];

    // A fresh tab opening the link: the sign-in form, not the attacker's session; the tokens are gone from the address bar.
    const fresh = await openPage(browser, c.url);
    await fresh.page.goto(lure('/devices'));
    expect(await whoIsSignedIn(fresh.page, names)).toBe('signed out');
    expect(fresh.page.url()).not.toContain('access_token');
    await screenshot(fresh.page, 'xss-login-csrf-fresh-tab');
    await fresh.close();

    // The operator's own signed-in tab opening the link: still the operator.
    const own = await session();
    await own.page.goto(lure('/agents'));
    expect(await whoIsSignedIn(own.page, names)).toBe(user.username);
    expect(own.page.url()).not.toContain('access_token');
    await screenshot(own.page, 'xss-login-csrf-signed-in-tab');
    await own.close();

    // A tab whose single sign-on was abandoned (the button pressed, the console back without
    // tokens): the sign-on is over, and a link opened in it within the 10 minutes signs nobody in.
    const abandoned = await openPage(browser, c.url);
    await abandoned.page.goto('/');
    await abandoned.page.evaluate(
      (key) => (globalThis as unknown as { sessionStorage: { setItem(k: string, v: string): void } }).sessionStorage.setItem(key, String(Date.now())),
      SSO_STARTED_KEY,
    ); // as the button does
    await abandoned.page.goto('/'); // back from the provider, signed in to nothing
    await abandoned.page.goto(lure('/devices'));
    expect(await whoIsSignedIn(abandoned.page, names)).toBe('signed out');
    expect(abandoned.page.url()).not.toContain('access_token');
    await abandoned.close();
  });
});
