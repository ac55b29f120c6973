import { DEFAULT_THEME, defaultVariantColorsResolver, getPrimaryShade, mergeMantineTheme } from '@mantine/core';
import { describe, expect, it } from 'vitest';
import { parseDiff, sideBySide } from '../../controller/console/src/lib/diff-model';
import { fieldOfError } from '../../controller/console/src/lib/field-errors';
import { backupEnded, backupProgressText } from '../../controller/console/src/lib/backup-progress';
import { ago, bytes, deviceTally } from '../../controller/console/src/lib/format';
import { oidcTestSummary } from '../../controller/console/src/lib/oidc-test';
import { parseSetting, settingRows } from '../../controller/console/src/lib/settings';
import { apiQuery, filtersFromSearch, orderFromSorting, searchFromFilters, sortingState } from '../../controller/console/src/pages/devices-query';
import {
  freshness,
  poolStatus,
  withAgentEvent,
  type AgentView,
  type PoolHealth,
  type SitesHealth,
} from '../../controller/console/src/pages/overview-model';
import { FILLED_COLOURS, theme } from '../../controller/console/src/theme';
import { DEVICE_TYPES as CONSOLE_DEVICE_TYPES } from '../../controller/console/src/lib/device-types';
import { DEVICE_TYPES } from '../../controller/src/devices/rules';
import { isServerPath } from '../../controller/src/console/headers';
import { contrastRatio, parseHex } from './contrast';

const agent = (name: string, site_id: string | null, status: AgentView['status']): AgentView => ({
  id: name,
  name,
  site_id,
  pool: site_id ?? 'default',
  status,
  last_seen_at: null,
  version: '1',
  active_jobs: 0,
  max_jobs: 4,
  completed_jobs: 0,
  failed_jobs: 0,
  capabilities: [],
  health: null,
  enrolled: true,
  enrolled_at: null,
  builtin: false,
  created_at: '2026-01-01T00:00:00.000Z',
});
const devices = (total: number, backed_up_24h: number): PoolHealth['devices'] => ({
  total,
  reachable: 0,
  unreachable: 0,
  unknown: total,
  backed_up_24h,
});
const pool = (site_id: string | null, agents: AgentView[]): PoolHealth => ({
  site_id,
  name: site_id ?? 'Default pool',
  pool: site_id ?? 'default',
  status: 'ok',
  agents,
  online_agents: agents.length,
  devices: devices(0, 0),
  failing_devices: [],
  last_snapshot: null,
});

describe('console diff model', () => {
  it('numbers each side and pairs removed with added lines side by side', () => {
    const lines = parseDiff(' a\n-b\n+B\n+C\n d\n');
    expect(lines.map((l) => [l.kind, l.oldNo, l.newNo])).toEqual([
      ['same', 1, 1],
      ['removed', 2, null],
      ['added', null, 2],
      ['added', null, 3],
      ['same', 3, 4],
    ]);
    const rows = sideBySide(lines);
    expect(rows.map((r) => [r.left?.text ?? null, r.right?.text ?? null])).toEqual([
      ['a', 'a'],
      ['b', 'B'],
      [null, 'C'],
      ['d', 'd'],
    ]);
  });
});

describe('console device filters', () => {
  it('round-trip through the URL and leave empty filters out of the API query', () => {
    const filters = filtersFromSearch('?q=core&vendor=Cisco&page=2&size=100&bogus=1');
    expect(filters).toMatchObject({ q: 'core', vendor: 'Cisco', page: 2, size: 100, platform: '' });
    expect(filtersFromSearch(searchFromFilters(filters))).toEqual(filters);
    expect(apiQuery(filters)).toEqual({ q: 'core', vendor: 'Cisco', limit: 100, offset: 200 });
  });

  it('ignores a page or size the URL got wrong', () => {
    expect(filtersFromSearch('?page=-3&size=7')).toMatchObject({ page: 0, size: 50 });
  });

  it('keeps the column order in the URL and sends it as sort/order; an unknown column is the default order', () => {
    const filters = filtersFromSearch('?sort=host&order=desc&page=1');
    expect(filters).toMatchObject({ sort: 'host', desc: true });
    expect(searchFromFilters(filters)).toBe('?page=1&sort=host&order=desc');
    expect(apiQuery(filters)).toEqual({ sort: 'host', order: 'desc', limit: 50, offset: 50 });
    expect(apiQuery(filtersFromSearch('?sort=manufacturer'))).toEqual({ sort: 'manufacturer', limit: 50, offset: 0 });
    expect(filtersFromSearch('?sort=password&order=up')).toMatchObject({ sort: '', desc: false });
    expect(searchFromFilters(filtersFromSearch(''))).toBe('');
  });

  it('maps the order to TanStack sorting state and back', () => {
    expect(sortingState(filtersFromSearch('?sort=site&order=desc'))).toEqual([{ id: 'site', desc: true }]);
    expect(sortingState(filtersFromSearch(''))).toEqual([]);
    expect(orderFromSorting([{ id: 'model', desc: false }])).toEqual({ sort: 'model', desc: false });
    expect(orderFromSorting([])).toEqual({ sort: '', desc: false });
    expect(orderFromSorting([{ id: 'select', desc: true }])).toEqual({ sort: '', desc: false });
  });
});

describe('console backup progress', () => {
  it('says each stage of a live backup, the failure with its reason, and when it ended', () => {
    expect(backupProgressText({ status: 'queued', error: null })).toMatch(/queued/);
    expect(backupProgressText({ status: 'running', error: null })).toMatch(/running/);
    expect(backupProgressText({ status: 'failed', error: 'Authentication failed' })).toBe(
      'Backup failed: Authentication failed. The failed attempt is listed below.',
    );
    expect([
      backupEnded({ status: 'running', error: null }),
      backupEnded({ status: 'succeeded', error: null }),
      backupEnded({ status: 'failed', error: 'x' }),
    ]).toEqual([false, true, true]);
  });
});

describe('console OIDC test result', () => {
  const base = { issuer: 'https://idp.example.test', client_id: 'sb', callback_url: 'https://sb.example.test/api/auth/oidc/callback', warnings: [] };
  it('lists the endpoints found and the redirect URI to register, or says why discovery failed', () => {
    const ok = oidcTestSummary({
      ...base,
      ok: true,
      message: 'Read the OpenID configuration of https://idp.example.test',
      endpoints: {
        authorization: 'https://idp.example.test/auth',
        token: 'https://idp.example.test/token',
        userinfo: null,
        jwks: 'https://idp.example.test/jwks',
      },
      warnings: ['No oidc.client_secret: public client'],
    });
    expect(ok).toEqual({
      ok: true,
      text:
        'OIDC: Read the OpenID configuration of https://idp.example.test. Endpoints: authorization https://idp.example.test/auth, token ' +
        'https://idp.example.test/token, jwks https://idp.example.test/jwks. Register https://sb.example.test/api/auth/oidc/callback as a ' +
        'redirect URI at the provider. Warning: No oidc.client_secret: public client.',
    });
    const failed = oidcTestSummary({
      ...base,
      ok: false,
      message: 'Cannot read the OpenID configuration of https://idp.example.test: connection refused',
      endpoints: { authorization: null, token: null, userinfo: null, jwks: null },
    });
    expect(failed).toEqual({ ok: false, text: 'OIDC: Cannot read the OpenID configuration of https://idp.example.test: connection refused.' });
  });
});

describe('console overview model', () => {
  it('calls a pool down only when every agent is offline, and degraded while an agent is not online or a device fails', () => {
    expect(poolStatus([])).toBe('no_agents');
    expect(poolStatus([agent('a', null, 'offline')])).toBe('down');
    expect(poolStatus([agent('a', null, 'degraded')])).toBe('degraded');
    expect(poolStatus([agent('a', null, 'online'), agent('b', null, 'offline')])).toBe('degraded');
    expect(poolStatus([agent('a', null, 'online')])).toBe('ok');
    expect(poolStatus([agent('a', null, 'online')], 2)).toBe('degraded');
  });

  it('applies an agent event to the shown aggregate, and asks for a fetch when the agent is new, moved or revoked', () => {
    const data: SitesHealth = {
      generated_at: '2026-01-01T00:00:00.000Z',
      pools: [pool(null, [agent('c', null, 'online')]), pool('s1', [agent('a', 's1', 'online'), agent('b', 's1', 'online')])],
    };
    const next = withAgentEvent(data, { id: 'b', site_id: 's1', status: 'offline', last_seen_at: '2026-01-01T00:00:05.000Z' })!;
    expect(next.pools[1].agents.map((a) => [a.name, a.status])).toEqual([
      ['a', 'online'],
      ['b', 'offline'],
    ]);
    expect(next.pools[1]).toMatchObject({ online_agents: 1 });
    expect(next.pools[1].agents[1].last_seen_at).toBe('2026-01-01T00:00:05.000Z');
    expect(next.pools[0]).toBe(data.pools[0]);
    expect(data.pools[1].agents[1].status).toBe('online');
    expect(withAgentEvent(data, { id: 'new', site_id: 's1', status: 'online', last_seen_at: null })).toBeUndefined();
    expect(withAgentEvent(data, { id: 'c', site_id: 's1', status: 'online', last_seen_at: null })).toBeUndefined();
    expect(withAgentEvent(data, { id: 'a', site_id: 's1', status: 'revoked', last_seen_at: null })).toBeUndefined();
  });

  it('words backup freshness as a share of all devices', () => {
    expect(freshness(devices(40, 12))).toBe('12 of 40 (30 %)');
    expect(freshness(devices(3, 3))).toBe('3 of 3 (100 %)');
    expect(freshness(devices(0, 0))).toBe('no devices');
  });
});

describe('console field errors', () => {
  it('puts validation and conflict messages next to their field', () => {
    expect(fieldOfError({ error: 'body.host must NOT have fewer than 1 characters', code: 'VALIDATION_FAILED' })).toEqual({
      field: 'host',
      message: 'body.host must NOT have fewer than 1 characters',
    });
    expect(fieldOfError({ error: "body must have required property 'device_type'" }).field).toBe('device_type');
    expect(fieldOfError({ error: 'Device with this name already exists', code: 'DEVICE_NAME_TAKEN' }).field).toBe('name');
    expect(fieldOfError({ error: 'Insufficient permissions', code: 'FORBIDDEN' }).field).toBeNull();
  });
});

describe('console formatting and paths', () => {
  it('says how long ago and how big', () => {
    const now = Date.parse('2026-01-01T12:00:00Z');
    expect(ago('2026-01-01T11:59:50Z', now)).toBe('10 s ago');
    expect(ago('2026-01-01T09:00:00Z', now)).toBe('3 h ago');
    expect(ago(null, now)).toBe('never');
    expect(bytes(2048)).toBe('2.0 KB');
  });

  it('keeps API and ops paths away from the console fallback', () => {
    for (const p of ['/api', '/api/devices', '/healthz', '/readyz', '/metrics']) expect(isServerPath(p), p).toBe(true);
    for (const p of ['/', '/devices', '/apiary', '/metrics-dashboard']) expect(isServerPath(p), p).toBe(false);
  });
});

describe('settings table', () => {
  const rows = settingRows({
    'oidc.issuer': '',
    'has_oidc.client_secret': true,
    'has_ldap.bind_password': false,
    'ldap.port': 389,
    'oidc.redirect_uris': [],
  });

  it('lists a secret under its own key, write-only, from the has_<key> boolean the API answers', () => {
    expect(rows.map((r) => [r.key, r.secret, r.value])).toEqual([
      ['ldap.bind_password', true, false],
      ['ldap.port', false, 389],
      ['oidc.client_secret', true, true],
      ['oidc.issuer', false, ''],
      ['oidc.redirect_uris', false, []],
    ]);
  });

  it('reads edits back with the type the setting had; a secret stays the text typed', () => {
    const row = (key: string) => rows.find((r) => r.key === key);
    expect(parseSetting('636', row('ldap.port'))).toBe(636);
    expect(parseSetting('["https://a.example/"]', row('oidc.redirect_uris'))).toEqual(['https://a.example/']);
    expect(parseSetting('https://idp.example', row('oidc.issuer'))).toBe('https://idp.example');
    expect(parseSetting('12345', row('oidc.client_secret'))).toBe('12345');
    expect(parseSetting('true', row('ldap.bind_password'))).toBe('true');
    expect(parseSetting('{not json', row('ldap.port'))).toBe('{not json');
  });
});

describe("the console theme's filled colours", () => {
  const merged = mergeMantineTheme(DEFAULT_THEME, theme);
  it('give their text WCAG AA contrast (4.5:1) in both colour schemes', () => {
    const seen = (['light', 'dark'] as const).flatMap((scheme) =>
      FILLED_COLOURS.map((color) => {
        const resolved = defaultVariantColorsResolver({ color, theme: merged, variant: 'filled' });
        // Mantine's CSS draws `<colour>-filled` at the scheme's primary shade.
        expect(resolved.background).toBe(`var(--mantine-color-${color}-filled)`);
        const background = merged.colors[color][getPrimaryShade(merged, scheme)];
        const text = resolved.color === 'var(--mantine-color-black)' ? merged.black : merged.white;
        return { scheme, color, ratio: Math.round(contrastRatio(parseHex(background), parseHex(text)) * 100) / 100 };
      }),
    );
    expect(seen.every((s) => Number.isFinite(s.ratio))).toBe(true);
    expect(seen.filter((s) => s.ratio < 4.5)).toEqual([]);
    expect(seen).toHaveLength(8);
  });
});

describe("a deployment's device tally", () => {
  const entry = (device_id: string, status: string) => ({ device_id, status });
  it('counts devices, not their service entries, by status, the biggest first', () => {
    expect(deviceTally([entry('a', 'completed'), entry('a', 'completed'), entry('b', 'failed'), entry('c', 'completed')], 3)).toBe(
      '2 completed, 1 failed of 3',
    );
    expect(deviceTally([entry('a', 'rolled_back'), entry('a', 'rolled_back')], 1)).toBe('1 rolled back of 1');
    expect(deviceTally([entry('a', 'queued'), entry('b', 'running')], 2)).toBe('1 queued, 1 running of 2');
    expect(deviceTally([], 4)).toBe('no devices yet of 4');
  });
});

describe('device types', () => {
  it('the console offers every device type the API accepts, and no other', () => {
    expect(CONSOLE_DEVICE_TYPES).toEqual([...DEVICE_TYPES]);
  });
});
