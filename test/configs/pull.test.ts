/**
 * Config pulls end to end: the API submits a backup job, a real agent runtime takes it over
 * NATS JetStream, opens real SSH / NETCONF sessions to the simulators, and the outcome
 * recorder stores the versions the API then reads and diffs.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestController, type TestController } from '../helpers/controller';
import { SHARED_NATS, dropNatsNamespace, enrollAgent, natsPrefix, startAgent } from '../agents/helpers';
import { freePort } from '../helpers/net';
import { inventoryUser, type InventoryUser } from '../inventory/helpers';
import { startNetconfDevice, type NetconfDevice } from '../sim/netconf/device';
import { configPlaceholder } from '../../shared/src/jobs/transcript';
import { normalizeConfig, startSshDevice, type SimSshDevice } from '../sim/ssh';

const PASSWORD = 'edge-Pa55word-secret';
const ENABLE = 'enable-Secret-77';

let c: TestController;
let u: InventoryUser;
let other: InventoryUser;
let agent: Awaited<ReturnType<typeof startAgent>>;
let edge: SimSshDevice;
let locked: SimSshDevice;
let nc: NetconfDevice;
let edgeId: string;
let lockedId: string;
let ncId: string;
const prefix = natsPrefix();

beforeAll(async () => {
  c = await startTestController({ config: { natsUrl: SHARED_NATS, natsPrefix: prefix, jobs: { sweepIntervalMs: 200 } } });
  u = await inventoryUser(c, ['org_admin']);
  other = await inventoryUser(c);
  const { identity } = await enrollAgent(c, u);
  agent = await startAgent(c, identity, { natsUrl: SHARED_NATS });

  edge = await startSshDevice({ hostname: 'edge-1', username: 'netops', password: PASSWORD, enablePassword: ENABLE, dialect: 'vendor_ios' });
  locked = await startSshDevice({ hostname: 'edge-2', username: 'netops', password: PASSWORD });
  nc = await startNetconfDevice({
    username: 'netops',
    password: PASSWORD,
    initialConfig: '<system xmlns="urn:example:system"><hostname>nc-1</hostname></system>',
  });
  const profile = await u.profile({ username: 'netops', password: PASSWORD, enable_password: ENABLE, ssh_port: edge.port });
  edgeId = (await u.device(profile.id, { name: 'edge-1', host: edge.host })).id;
  const wrong = await u.profile({ username: 'netops', password: 'not-the-password', ssh_port: locked.port });
  lockedId = (await u.device(wrong.id, { name: 'edge-2', host: locked.host })).id;
  const ncProfile = await u.profile({
    username: 'netops',
    password: PASSWORD,
    ssh_port: await freePort(),
    netconf_port: nc.port,
    automation_transport: 'netconf',
  });
  ncId = (await u.device(ncProfile.id, { name: 'nc-1', host: nc.host, device_type: 'vendor_junos' })).id;
}, 60_000);

afterAll(async () => {
  await agent?.stop();
  await Promise.all([edge?.close(), locked?.close(), nc?.close()]);
  await c?.close();
  await dropNatsNamespace(SHARED_NATS, prefix).catch(() => undefined);
});

const pull = (id: string, method?: string) => u.as('POST', `/api/config/devices/${id}/pull${method ? `?method=${method}` : ''}`);

describe('POST /api/config/devices/:device_id/pull', () => {
  it('stores the running config as version 1 (method=cli)', async () => {
    const res = await pull(edgeId, 'cli');
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ cli: true, structured: false });
    expect(res.body.message).toContain('cli stored as version 1');
    // reveal: the text as stored, which size_bytes and line_count describe (secrets unmasked).
    const v = await u.as('GET', `/api/config/devices/${edgeId}/configs/1?reveal=true`);
    expect(v.body).toMatchObject({
      version: 1,
      status: 'success',
      source: 'pull',
      pulled_via: 'ssh',
      config_format: 'cli',
      method: 'cli',
      error_message: null,
    });
    expect(normalizeConfig(v.body.config_text)).toBe(edge.config());
    expect(v.body.size_bytes).toBe(Buffer.byteLength(v.body.config_text));
    expect(v.body.line_count).toBe(v.body.config_text.trimEnd().split('\n').length);
  });

  it('gives an unchanged device the same hash and an identical diff', async () => {
    const res = await pull(edgeId, 'cli');
    expect(res.status).toBe(201);
    const list = (await u.as('GET', `/api/config/devices/${edgeId}/configs`)).body.configs;
    expect(list.map((v: any) => v.version)).toEqual([2, 1]);
    expect(list[0].config_hash).toBe(list[1].config_hash);
    const diff = await u.as('GET', `/api/config/devices/${edgeId}/diff-versions?old_version=1&new_version=2`);
    expect(diff.body).toMatchObject({ identical: true, additions: 0, deletions: 0, diff: '' });
  });

  it('diffs a changed config with additions and deletions', async () => {
    const before = edge.config();
    const lines = before.split('\n');
    const removed = lines.find((l) => l.startsWith('hostname'))!;
    // The banner goes before the final `end`, where IOS prints it: a config after its `end` reads as a pull cut short.
    edge.setConfig(before.replace(removed, 'hostname edge-1-renamed').replace(/^end\n$/m, 'banner motd ^C maintenance window ^C\nend\n'));
    const res = await pull(edgeId); // default method both: structured skipped, no transport on the profile
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ cli: true, structured: false });
    expect(res.body.message).toContain('structured skipped');
    expect(res.body.versions).toEqual([{ method: 'cli', version: 3, status: 'success', error_message: null }]);
    const diff = await u.as('GET', `/api/config/devices/${edgeId}/diff-versions?old_version=2&new_version=3`);
    expect(diff.status).toBe(200);
    expect(diff.body).toMatchObject({
      old_version: 2,
      new_version: 3,
      old_format: 'cli',
      new_format: 'cli',
      identical: false,
      additions: 2,
      deletions: 1,
    });
    expect(diff.body.diff).toContain(`-${removed}`);
    expect(diff.body.diff).toContain('+hostname edge-1-renamed');
    expect(diff.body.diff).toContain('+banner motd ^C maintenance window ^C');
    const hashes = (await u.as('GET', `/api/config/devices/${edgeId}/configs`)).body.configs.map((v: any) => v.config_hash);
    expect(hashes[0]).not.toBe(hashes[1]);
  });

  it('keeps the session transcript with every secret masked', async () => {
    const latest = await u.as('GET', `/api/config/devices/${edgeId}/configs/latest`);
    const log = await u.as('GET', `/api/devices/snapshots/backups/${latest.body.id}/log`);
    expect(log.status).toBe(200);
    expect(log.body.log.length).toBeGreaterThan(100);
    // The agent sends the config once (in the result); the stored transcript has it back in place.
    expect(log.body.log).toContain('> show running-config');
    expect(log.body.log).toContain(latest.body.config_text.split('\n').find((l: string) => l.startsWith('hostname')));
    expect(log.body.log).not.toContain('\uE000');
    expect(log.body.log).not.toContain(PASSWORD);
    expect(log.body.log).not.toContain(ENABLE);
    expect(c.logs()).not.toContain(PASSWORD);
    // The config is stored once, in its version: the stored transcript keeps the placeholder, and
    // the config read back into it is masked like the rest (its secrets, the device's credentials).
    const stored = await c.db('config_versions').where({ id: latest.body.id }).first('transcript', 'config_text');
    expect(stored.transcript).toContain(configPlaceholder('cli'));
    expect(stored.transcript).not.toContain('hostname edge-1-renamed');
    const secretLine = stored.config_text.split('\n').find((l: string) => l.startsWith('enable secret '));
    expect(secretLine).toMatch(/^enable secret \d+ \S+$/);
    expect(log.body.log).not.toContain(secretLine);
    // Shown as the config endpoints show it: the same keyed mask.
    const shownLine = latest.body.config_text.split('\n').find((l: string) => l.startsWith('enable secret '));
    expect(shownLine).toMatch(/^enable secret \d+ <secret:[0-9a-f]{8}>$/);
    expect(log.body.log).toContain(shownLine);
  });

  it('stores a failed version with error_message and answers 502 when the password is wrong', async () => {
    const res = await pull(lockedId, 'cli');
    expect(res.status).toBe(502);
    expect(res.body.code).toBe('CONFIG_PULL_FAILED');
    expect(res.body.error).toMatch(/auth/i);
    const list = await u.as('GET', `/api/config/devices/${lockedId}/configs`);
    expect(list.body.total).toBe(1);
    expect(list.body.configs[0]).toMatchObject({ version: 1, status: 'failed', method: 'cli', pulled_via: 'ssh', size_bytes: 0 });
    expect(list.body.configs[0].error_message).toMatch(/auth/i);
    expect(list.body.configs[0].error_message).not.toContain('not-the-password');
  });

  it('pulls structured config over NETCONF and stores cli and structured separately with both', async () => {
    const res = await pull(ncId, 'structured');
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ structured: true, cli: false });
    const v1 = await u.as('GET', `/api/config/devices/${ncId}/configs/1`);
    expect(v1.body).toMatchObject({ method: 'structured', pulled_via: 'netconf', config_format: 'xml', status: 'success' });
    expect(v1.body.config_text).toContain('<hostname>nc-1</hostname>');

    // both: structured works, cli fails (nothing listens on the profile's ssh_port) — still 201.
    const both = await pull(ncId, 'both');
    expect(both.status, both.text).toBe(201);
    expect(both.body).toMatchObject({ structured: true, cli: false });
    const list = (await u.as('GET', `/api/config/devices/${ncId}/configs`)).body.configs;
    expect(
      list
        .slice(0, 2)
        .map((v: any) => [v.method, v.status])
        .sort(),
    ).toEqual([
      ['cli', 'failed'],
      ['structured', 'success'],
    ]);
    const identical = await u.as(
      'GET',
      `/api/config/devices/${ncId}/diff-versions?old_version=1&new_version=${list.find((v: any) => v.method === 'structured').version}`,
    );
    expect(identical.body).toMatchObject({ identical: true, old_format: 'xml', new_format: 'xml' });
    // Both versions of the pull share one transcript: the failed method's row reads it back with the
    // structured config in place too.
    const failedCli = list.find((v: any) => v.method === 'cli');
    const log = await u.as('GET', `/api/devices/snapshots/backups/${failedCli.id}/log`);
    expect(log.status).toBe(200);
    expect(log.body.log).toContain('<hostname>nc-1</hostname>');
    expect(log.body.log).not.toContain('\uE000');
    const stored = await c.db('config_versions').where({ id: failedCli.id }).first('transcript');
    expect(stored.transcript).toContain(configPlaceholder('structured'));
  });

  it('stores a failed version and answers 502 for method=structured when the profile has no automation_transport', async () => {
    const before = (await u.as('GET', `/api/config/devices/${edgeId}/configs`)).body.total;
    const res = await pull(edgeId, 'structured');
    expect(res.status, res.text).toBe(502);
    expect(res.body.code).toBe('CONFIG_PULL_FAILED');
    expect(res.body.error).toContain('automation_transport');
    const list = (await u.as('GET', `/api/config/devices/${edgeId}/configs`)).body;
    expect(list.total).toBe(before + 1);
    expect(list.configs[0]).toMatchObject({ method: 'structured', status: 'failed', size_bytes: 0 });
    expect(list.configs[0].error_message).toContain('automation_transport');
  });

  it("404 for an unknown device and for another organization's device", async () => {
    expect((await u.as('POST', `/api/config/devices/${randomUUID()}/pull`)).status).toBe(404);
    const res = await other.as('POST', `/api/config/devices/${edgeId}/pull?method=cli`);
    expect(res.status).toBe(404);
    expect((await other.as('GET', `/api/config/devices/${edgeId}/configs`)).status).toBe(404);
  });
});

describe('credential tests', () => {
  it('POST /api/devices/:id/test-credential says whether the credentials log in', async () => {
    const good = await u.as('POST', `/api/devices/${edgeId}/test-credential`);
    expect(good.status, good.text).toBe(200);
    expect(good.body).toMatchObject({ device_id: edgeId, device_name: 'edge-1', success: true });
    const bad = await u.as('POST', `/api/devices/${lockedId}/test-credential`);
    expect(bad.status).toBe(200);
    expect(bad.body).toMatchObject({ device_id: lockedId, success: false });
    expect(bad.body.message).toMatch(/auth/i);
    expect(bad.body.message).not.toContain('not-the-password');
  });

  it('POST /api/devices/bulk/test-credentials tests many at once', async () => {
    const res = await u.as('POST', '/api/devices/bulk/test-credentials', { body: { device_ids: [edgeId, lockedId] } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ total: 2, succeeded: 1, failed: 1 });
    expect(res.body.results.find((r: any) => r.device_id === edgeId).success).toBe(true);
    for (const body of [{}, { device_ids: [] }, { device_ids: ['nope'] }]) {
      expect((await u.as('POST', '/api/devices/bulk/test-credentials', { body })).status).toBe(400);
    }
  });
});

describe('GET /api/devices/with-backup-info', () => {
  it("shows each device's newest backup after real pulls", async () => {
    const res = await u.as('GET', '/api/devices/with-backup-info');
    const byName = Object.fromEntries(res.body.devices.map((d: any) => [d.name, d]));
    // edge-1's newest is the failed structured attempt; its newest good one the cli version before.
    expect(byName['edge-1'].last_backup).toMatchObject({ version: 4, status: 'failed', method: 'structured' });
    expect(byName['edge-1'].last_successful_backup).toMatchObject({ version: 3, status: 'success', method: 'cli' });
    expect(byName['edge-2'].last_backup).toMatchObject({ version: 1, status: 'failed' });
    expect(byName['edge-2'].last_successful_backup).toBeNull();
  });
});
