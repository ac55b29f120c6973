/**
 * Secrets inside stored configurations through the API: a real pull from the SSH simulator
 * (IOS dialect, whose config holds an enable secret, a user's secret and an SNMP community),
 * then the reads that show configs mask them; reveal=true gives the stored text to callers with
 * configs.secrets (audited), and 403 to others; the stored text itself stays raw.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Org } from '../agents/helpers';
import { startTestController, type TestController } from '../helpers/controller';
import { startSshDevice, type SimSshDevice } from '../sim/ssh';
import { startNetconfDevice } from '../sim/netconf/device';
import { agentFor, api, netconfDevice, sshDevice } from '../deployments/helpers';

const PASSWORD = 'secrets-api-pw';
const MASK = /<secret:[0-9a-f]{8}>/;

let c: TestController;
let org: Org;
let operator: string;
let agent: Awaited<ReturnType<typeof agentFor>>;
let sim: SimSshDevice;
let device: any;
let enableSecret: string;

beforeAll(async () => {
  c = await startTestController({ config: { jobs: { sweepIntervalMs: 200 } } });
  org = await c.createOrgUser(['org_admin']);
  const username = `op-${randomBytes(3).toString('hex')}`;
  const password = `pw-${randomBytes(12).toString('hex')}`;
  await api(c, org.token, 'POST', '/api/admin/users', { username, password, roles: ['operator'] }, 201);
  operator = (await c.login(username, password)).body.access_token;
  agent = await agentFor(c, org);
  sim = await startSshDevice({ dialect: 'vendor_ios', hostname: 'sec-1', password: PASSWORD, configScale: 1 });
  device = await sshDevice(c, org.token, sim, PASSWORD, 'sec-1');
  enableSecret = /^enable secret 9 (\S+)$/m.exec(sim.config())![1];
  await api(c, org.token, 'POST', `/api/config/devices/${device.id}/pull?method=cli`, undefined, 201);
});

afterAll(async () => {
  await agent?.stop();
  await c?.close();
  await sim?.close();
});

describe('stored configs are shown with the device secrets masked', () => {
  it('masks latest and by-version reads for everyone, and keeps the stored text raw', async () => {
    const raw = sim.config();
    expect(raw).toContain(enableSecret);
    for (const token of [org.token, operator]) {
      for (const path of ['latest', '1']) {
        const shown = await api(c, token, 'GET', `/api/config/devices/${device.id}/configs/${path}`);
        expect(shown.config_text).not.toContain(enableSecret);
        expect(shown.config_text).not.toContain('n0tpublic');
        expect(shown.config_text).not.toContain('$9$Q1w2E3r4T5y6U7');
        expect(shown.config_text).toMatch(/^enable secret 9 <secret:[0-9a-f]{8}>$/m);
        expect(shown.config_text).toMatch(/^snmp-server community <secret:[0-9a-f]{8}> RO MGMT$/m);
        expect(shown.config_text).toContain('hostname sec-1');
      }
    }
    const stored = await c.db('config_versions').where({ device_id: device.id, version: 1 }).first('config_text', 'config_hash');
    expect(stored.config_text).toContain(enableSecret);
  });

  it('gives the raw text with reveal=true to configs.secrets holders, audited; 403 to others', async () => {
    const revealed = await api(c, org.token, 'GET', `/api/config/devices/${device.id}/configs/latest?reveal=true`);
    expect(revealed.config_text).toContain(enableSecret);
    const audit = await c.db('audit_log').where({ kind: 'config.secrets_revealed', org_id: org.orgId });
    expect(audit).toHaveLength(1);
    expect(audit[0].user_id).toEqual(expect.any(String));
    expect(JSON.stringify(audit[0])).not.toContain(enableSecret);

    for (const path of [`configs/latest?reveal=true`, `configs/1?reveal=true`, `diff-versions?old_version=1&new_version=1&reveal=true`]) {
      const res = await c.request('GET', `/api/config/devices/${device.id}/${path}`, { token: operator });
      expect(res.status, path).toBe(403);
      expect(res.body.error).toMatch(/configs\.secrets/);
    }
    expect(await c.db('audit_log').where({ kind: 'config.secrets_revealed', org_id: org.orgId })).toHaveLength(1);
    expect((await api(c, org.token, 'GET', '/api/auth/me')).permissions).toContain('configs.secrets');
    expect((await api(c, operator, 'GET', '/api/auth/me')).permissions).not.toContain('configs.secrets');
  });

  it('diffs masked text: a changed secret shows as a changed mask, never in clear', async () => {
    const changed = 'Xx$9$changedSecretValue';
    sim.setConfig(sim.config().replace(`enable secret 9 ${enableSecret}`, `enable secret 9 ${changed}`));
    await api(c, org.token, 'POST', `/api/config/devices/${device.id}/pull?method=cli`, undefined, 201);
    const diff = await api(c, operator, 'GET', `/api/config/devices/${device.id}/diff-versions?old_version=1&new_version=2`);
    expect(diff.identical).toBe(false);
    expect(diff.diff).not.toContain(enableSecret);
    expect(diff.diff).not.toContain(changed);
    const removed = diff.diff.split('\n').filter((l: string) => l.startsWith('-enable secret'));
    const added = diff.diff.split('\n').filter((l: string) => l.startsWith('+enable secret'));
    expect(removed).toHaveLength(1);
    expect(added).toHaveLength(1);
    expect(removed[0]).toMatch(MASK);
    expect(added[0]).toMatch(MASK);
    expect(removed[0]).not.toBe(added[0].replace('+', '-'));
    expect([diff.additions, diff.deletions]).toEqual([1, 1]);

    const raw = await api(c, org.token, 'GET', `/api/config/devices/${device.id}/diff-versions?old_version=1&new_version=2&reveal=true`);
    expect(raw.diff).toContain(`-enable secret 9 ${enableSecret}`);
    expect(raw.diff).toContain(`+enable secret 9 ${changed}`);
  });
});

describe('every dialect of the SSH simulator', () => {
  // The password hash each persona's running config holds.
  const HASHES: Record<string, string> = {
    vendor_nxos: '$5$ABCD$0123456789abcdef',
    vendor_eos: '$6$abc$0123456789',
    vendor_xr: '$6$abc/def$0123456789',
    vendor_junos: '$6$abc$0123456789abcdef',
    vendor_panos: '$5$abcdef$0123456789',
    vendor_fw: 'SH2abcdef0123456789',
  };
  it.each(Object.keys(HASHES))('%s: the pulled config is shown masked, and stored as pulled', async (dialect) => {
    const dev = await startSshDevice({ dialect, hostname: `sec-${dialect.slice(7)}`, password: PASSWORD, configScale: 1 });
    try {
      expect(dev.config()).toContain(HASHES[dialect]);
      const d = await sshDevice(c, org.token, dev, PASSWORD, `sec-${dialect.slice(7)}`);
      await api(c, org.token, 'POST', `/api/config/devices/${d.id}/pull?method=cli`, undefined, 201);
      const shown = (await api(c, operator, 'GET', `/api/config/devices/${d.id}/configs/latest`)).config_text as string;
      expect(shown).not.toContain(HASHES[dialect]);
      expect(shown).toMatch(MASK);
      expect((await api(c, org.token, 'GET', `/api/config/devices/${d.id}/configs/latest?reveal=true`)).config_text).toContain(HASHES[dialect]);
    } finally {
      await dev.close();
    }
  });
});

describe('structured configs', () => {
  it('NETCONF (Junos XML): encrypted-password and the SNMP community are shown masked', async () => {
    const nc = await startNetconfDevice({
      initialConfig:
        '<configuration xmlns="urn:sb:junos"><system><host-name>nc-sec</host-name><root-authentication>' +
        '<encrypted-password>$6$nc$0123456789</encrypted-password></root-authentication></system>' +
        '<snmp><community><name>nc-c0mm</name></community></snmp></configuration>',
    });
    try {
      const d = await netconfDevice(c, org.token, nc, 'nc-sec');
      await api(c, org.token, 'POST', `/api/config/devices/${d.id}/pull?method=structured`, undefined, 201);
      const shown = (await api(c, operator, 'GET', `/api/config/devices/${d.id}/configs/latest`)).config_text as string;
      expect(shown).toContain('<host-name>nc-sec</host-name>');
      expect(shown).not.toContain('$6$nc$0123456789');
      expect(shown).not.toContain('nc-c0mm');
      expect(shown).toMatch(/<encrypted-password><secret:[0-9a-f]{8}><\/encrypted-password>/);
    } finally {
      await nc.close();
    }
  });
});
