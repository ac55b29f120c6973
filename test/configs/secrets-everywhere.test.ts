/**
 * The device's secrets stay masked on every route that shows its text, not only on the config
 * reads: the audit found an operator (no configs.secrets) reading SNMPv3 keys and a WPA key in
 * clear in a backup's session transcript while GET …/configs/latest masked them. Here a real
 * agent over NATS pulls from the SSH and NETCONF simulators, whose configs carry those secrets
 * (and the device's own login password where no rule would find it), and the operator reads the
 * config, the diff, the pull's and the snapshot's transcripts, a transcript stored the way an
 * older release stored it, dry runs' diffs (over SSH and NETCONF, the login password and a secret
 * spanning lines in their context) and the deployment log: no secret value anywhere.
 * reveal=true, for a holder of configs.secrets, shows the config as stored.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHARED_NATS, dropNatsNamespace, enrollAgent, natsPrefix, startAgent, until, type Org } from '../agents/helpers';
import { startTestController, type TestController } from '../helpers/controller';
import { startNetconfDevice, type NetconfDevice } from '../sim/netconf/device';
import { startSshDevice, type SimSshDevice } from '../sim/ssh';
import { api, sshDevice, waitFor } from '../deployments/helpers';

const PASSWORD = 'Lab-L0gin-pw-77';
const MASKED = /<secret:[0-9a-f]{8}>/;

/** The secret lines the audit reproduced, and more of the same kinds; each value must never show. */
const SECRET_LINES = [
  'snmp-server user monitor NMS v3 auth sha SnmpAuthS3cret priv aes 128 SnmpPrivS3cret',
  'snmp-server host 192.0.2.9 version 2c TrapC0mmS3cret',
  'tacacs-server host 192.0.2.5 key 7 TacacsKeyS3cret',
  'crypto isakmp key IsakmpS3cret address 192.0.2.1',
  'interface Dialer1',
  ' description reached with ' + PASSWORD,
  ' ppp chap password 7 ChapS3cret',
  'router bgp 65000',
  ' neighbor 192.0.2.2 password 7 BgpS3cret',
  'dot11 ssid CORP',
  ' wpa-psk ascii 0 WifiPskS3cret',
];
const SECRETS = [
  'SnmpAuthS3cret',
  'SnmpPrivS3cret',
  'TrapC0mmS3cret',
  'TacacsKeyS3cret',
  'IsakmpS3cret',
  'ChapS3cret',
  'BgpS3cret',
  'WifiPskS3cret',
  PASSWORD,
  'n0tpublic', // the simulator's own SNMP community
];
// After `snmp-server location`: the login password where no rule would find it, in a dry run's diff context.
const BANNER = ['banner exec ^C', `break-glass: admin / ${PASSWORD}`, '^C'];
const ROTATED = 'SnmpPrivR0tated';
const NC_PASSWORD = 'Nc-L0gin-pw-42';
// The NETCONF device's TACACS+ secret spans two lines (its text has a line break), as its XML shows it.
const NC_SECRETS = ['$6$nc$RootHashS3cret', 'NcC0mmS3cret', '$9$NcPrivacyS3cret', '$9$NcIkeS3cret', 'NcTacHead', 'NcTacTailS3cret', NC_PASSWORD];

let c: TestController;
let org: Org;
let operator: string;
let agent: Awaited<ReturnType<typeof startAgent>>;
let sim: SimSshDevice;
let nc: NetconfDevice;
let device: { id: string };
let ncDevice: { id: string };
const prefix = natsPrefix();

/** `text` holds none of the secrets (the rotated one and the NETCONF device's included). */
function expectNoSecret(text: string, where: string) {
  for (const secret of [...SECRETS, ROTATED, ...NC_SECRETS]) expect(text, `${where} shows ${secret}`).not.toContain(secret);
}

const asOperator = (path: string) => api(c, operator, 'GET', path);
const asAdmin = (method: string, path: string, body?: unknown, status = 200) => api(c, org.token, method, path, body, status);

beforeAll(async () => {
  c = await startTestController({
    config: { natsUrl: SHARED_NATS, natsPrefix: prefix, jobs: { sweepIntervalMs: 200 }, deployments: { sweepIntervalMs: 200, staleMs: 300 } },
  });
  org = await c.createOrgUser(['org_admin']);
  const username = `op-${randomBytes(3).toString('hex')}`;
  const password = `pw-${randomBytes(12).toString('hex')}`;
  await asAdmin('POST', '/api/admin/users', { username, password, roles: ['operator'] }, 201);
  operator = (await c.login(username, password)).body.access_token;
  const { identity } = await enrollAgent(c, org);
  agent = await startAgent(c, identity, { natsUrl: SHARED_NATS });

  sim = await startSshDevice({ dialect: 'vendor_ios', hostname: 'sec-all', password: PASSWORD, configScale: 1 });
  // The secret lines just before `snmp-server location`, which the dry run below changes: a
  // diff's context lines are config too.
  sim.setConfig(sim.config().replace(/^snmp-server location .*$/m, (location) => [...SECRET_LINES, location, ...BANNER].join('\n')));
  device = await sshDevice(c, org.token, sim, PASSWORD, 'sec-all');

  nc = await startNetconfDevice({
    password: NC_PASSWORD,
    // The dry run below changes domain-name: the login message and the TACACS+ secret are its diff's context.
    initialConfig:
      '<configuration xmlns="urn:sb:junos"><system><host-name>nc-all</host-name><root-authentication>' +
      '<encrypted-password>$6$nc$RootHashS3cret</encrypted-password></root-authentication>' +
      `<login><message>break-glass: admin / ${NC_PASSWORD}</message></login><domain-name>nc.example</domain-name>` +
      '<tacplus-server><secret>NcTacHead\nNcTacTailS3cret</secret><name>192.0.2.5</name></tacplus-server></system>' +
      '<snmp><community><name>NcC0mmS3cret</name></community><v3><usm><local-engine><user><name>mon</name>' +
      '<privacy-aes128><privacy-key>$9$NcPrivacyS3cret</privacy-key></privacy-aes128></user></local-engine></usm></v3></snmp>' +
      '<security><ike><policy><name>p1</name><pre-shared-key><ascii-text>$9$NcIkeS3cret</ascii-text></pre-shared-key></policy></ike></security>' +
      '</configuration>',
  });
  const ncProfile = await asAdmin(
    'POST',
    '/api/profiles',
    { name: 'p-nc-all', username: 'admin', password: NC_PASSWORD, netconf_port: nc.port, automation_transport: 'netconf' },
    201,
  );
  ncDevice = await asAdmin('POST', '/api/devices', { name: 'nc-all', host: nc.host, device_type: 'vendor_junos', profile_id: ncProfile.id }, 201);

  await asAdmin('POST', `/api/config/devices/${device.id}/pull?method=cli`, undefined, 201); // v1
  sim.setConfig(sim.config().replace('SnmpPrivS3cret', ROTATED));
  await asAdmin('POST', `/api/config/devices/${device.id}/pull?method=cli`, undefined, 201); // v2
  await asAdmin('POST', `/api/config/devices/${ncDevice.id}/pull?method=structured`, undefined, 201);
}, 60_000);

afterAll(async () => {
  await agent?.stop();
  await c?.close();
  await Promise.all([sim?.close(), nc?.close()]);
  await dropNatsNamespace(SHARED_NATS, prefix).catch(() => undefined);
});

describe('an operator without configs.secrets', () => {
  it('reads configs with every secret masked, the login password too', async () => {
    for (const path of ['latest', '1', '2']) {
      const shown = (await asOperator(`/api/config/devices/${device.id}/configs/${path}`)).config_text as string;
      expectNoSecret(shown, `configs/${path}`);
      expect(shown).toMatch(/^snmp-server user monitor NMS v3 auth sha <secret:[0-9a-f]{8}> priv aes 128 <secret:[0-9a-f]{8}>$/m);
      expect(shown).toMatch(/^ wpa-psk ascii 0 <secret:[0-9a-f]{8}>$/m);
      expect(shown).toContain(' description reached with ********');
      expect(shown).toContain('hostname sec-all');
    }
    const xml = (await asOperator(`/api/config/devices/${ncDevice.id}/configs/latest`)).config_text as string;
    expectNoSecret(xml, 'the NETCONF config');
    expect(xml).toContain('<host-name>nc-all</host-name>');
  });

  it('reads the diff of two versions masked: the rotated key is a changed mask', async () => {
    const diff = await asOperator(`/api/config/devices/${device.id}/diff-versions?old_version=1&new_version=2`);
    expectNoSecret(diff.diff, 'diff-versions');
    const changed = (sign: string) => diff.diff.split('\n').filter((l: string) => l.startsWith(`${sign}snmp-server user monitor`));
    expect(changed('-')).toHaveLength(1);
    expect(changed('+')).toHaveLength(1);
    expect(changed('-')[0].slice(1)).not.toBe(changed('+')[0].slice(1));
    expect(changed('+')[0]).toMatch(MASKED);
  });

  it('reads the transcript of each pull masked exactly as the config endpoints mask the config', async () => {
    const versions = (await asOperator(`/api/config/devices/${device.id}/configs`)).configs;
    expect(versions).toHaveLength(2);
    for (const v of versions) {
      const log = (await asOperator(`/api/devices/snapshots/backups/${v.id}/log`)).log as string;
      expectNoSecret(log, `the transcript of version ${v.version}`);
      expect(log).toContain('> show running-config');
      const shown = (await asOperator(`/api/config/devices/${device.id}/configs/${v.version}`)).config_text as string;
      for (const line of shown.split('\n').filter((l) => MASKED.test(l) || l.includes('********'))) {
        expect(log, `version ${v.version}`).toContain(line);
      }
    }
    const [ncVersion] = (await asOperator(`/api/config/devices/${ncDevice.id}/configs`)).configs;
    const ncLog = (await asOperator(`/api/devices/snapshots/backups/${ncVersion.id}/log`)).log as string;
    expect(ncLog).toContain('nc-all');
    expectNoSecret(ncLog, 'the NETCONF transcript');
  });

  it('reads a snapshot backup log masked', async () => {
    // both: the NETCONF device's cli attempt fails (nothing listens for SSH there), its structured one succeeds.
    const snap = (await asAdmin('POST', '/api/devices/snapshots', { name: 'secrets', device_filter: {}, method: 'both' }, 201)).snapshot;
    await asAdmin('POST', `/api/devices/snapshots/${snap.id}/collect`, {}, 202);
    await until('the snapshot to finish', async () => {
      const s = (await asOperator(`/api/devices/snapshots/${snap.id}`)).snapshot;
      return s.status !== 'collecting' && s.status !== 'pending' ? s : undefined;
    });
    const { backups } = await asOperator(`/api/devices/snapshots/${snap.id}/backups`);
    expect(backups.map((b: any) => `${b.device_name} ${b.backup_method} ${b.status}`).sort()).toEqual([
      'nc-all cli failed',
      'nc-all structured success',
      'sec-all cli success',
    ]);
    const logs: string[] = [];
    for (const b of backups) {
      expectNoSecret(JSON.stringify(b), 'a snapshot backup entry');
      const log = (await asOperator(`/api/devices/snapshots/backups/${b.config_id}/log`)).log as string;
      expectNoSecret(log, `the snapshot transcript of ${b.device_name}`);
      logs.push(log);
    }
    expect(logs.some((l) => l.includes('hostname sec-all'))).toBe(true);
    expect(logs.some((l) => l.includes('<host-name>nc-all</host-name>'))).toBe(true);
  });

  it('reads a transcript stored by an older release (its config in it, masked by keywords only) masked too', async () => {
    const [v1] = await c.db('config_versions').where({ device_id: device.id, version: 1 }).select('id', 'config_text');
    // What the audit saw stored: the keyword pass had masked `psk ascii`, not the key after it.
    const old = `> show running-config\n${v1.config_text.replace('wpa-psk ascii 0', 'wpa-psk ******** 0')}\nsec-all#`;
    expect(old).toContain('WifiPskS3cret');
    await c.db('config_versions').where({ id: v1.id }).update({ transcript: old });
    const log = (await asOperator(`/api/devices/snapshots/backups/${v1.id}/log`)).log as string;
    expectNoSecret(log, 'an older transcript');
    expect(log).toMatch(/^ wpa-psk \*{8} 0 <secret:[0-9a-f]{8}>$/m);
  });

  /** A dry run of one template on `deviceId`: the deployment as the operator reads it. */
  async function dryRun(deviceId: string, template: { name: string } & Record<string, unknown>, vars: Record<string, unknown>) {
    const tpl = await asAdmin('POST', '/api/config/templates', template, 201);
    const stack = await asAdmin('POST', '/api/config/stacks', { name: template.name, services: [{ template_id: tpl.id }] }, 201);
    const created = await asAdmin(
      'POST',
      '/api/config/deployments',
      {
        stack_id: stack.id,
        name: `dry ${template.name}`,
        dry_run: true,
        target_devices: [{ device_id: deviceId }],
        variable_values: { '0': { devices: [deviceId], shared_vars: vars } },
      },
      201,
    );
    const done = await waitFor(c, org.token, created.id, ['dry_run_completed', 'dry_run_failed', 'completed', 'failed']);
    expect(done.status, JSON.stringify(done.devices)).toBe('dry_run_completed');
    return asOperator(`/api/config/deployments/${created.id}`);
  }

  it("reads a dry run's diff and the deployment log masked, the login password in the diff's context too", async () => {
    const shown = await dryRun(
      device.id,
      {
        name: 'location',
        platform: 'vendor_xe-netconf',
        config_format: 'cli',
        target_path: 'location',
        source: 'snmp-server location {{ where }}\n',
      },
      { where: 'rack-99' },
    );
    const diff: string = shown.devices[0].dry_run_diff;
    expect(diff).toContain('+snmp-server location rack-99');
    // Context lines: a rule's secret before the change, the login password in a banner after it.
    expect(diff).toMatch(/^ {2}wpa-psk ascii 0 <secret:[0-9a-f]{8}>$/m);
    expect(diff).toContain(' break-glass: admin / ********');
    expectNoSecret(diff, 'the dry-run diff');
    const logs = await asOperator(`/api/config/deployments/${shown.id}/logs`);
    expect(logs.logs.length).toBeGreaterThan(0);
    expectNoSecret(JSON.stringify(logs), 'the deployment log');
  });

  it("reads a NETCONF dry run's diff masked: a secret spanning lines, the login password", async () => {
    const shown = await dryRun(
      ncDevice.id,
      {
        name: 'domain',
        platform: 'ietf-netconf',
        config_format: 'xml',
        operation: 'merge',
        source: '<configuration xmlns="urn:sb:junos"><system><domain-name>{{ domain }}</domain-name></system></configuration>',
      },
      { domain: 'dry.example' },
    );
    const diff: string = shown.devices[0].dry_run_diff;
    expect(diff).toMatch(/^\+ *<domain-name>dry\.example<\/domain-name>$/m);
    expect(diff).toMatch(/^ *<message>break-glass: admin \/ \*{8}<\/message>$/m);
    expect(diff).toMatch(/^ *<secret><secret:[0-9a-f]{8}>\n <\/secret>$/m);
    expectNoSecret(diff, 'the NETCONF dry-run diff');
    // The diff stored raw had both (so the test shows what masking removed).
    const stored = await c.db('deployment_devices').where({ deployment_id: shown.id }).first('dry_run_diff');
    for (const secret of ['NcTacHead', 'NcTacTailS3cret', NC_PASSWORD]) expect(stored.dry_run_diff).toContain(secret);
  });
});

describe('secret variables of stacks, instances and deployments', () => {
  // A template that puts a community and a key from variables into the config: the operator must
  // read neither, where a backup of the result would show them masked. The key goes where no
  // config rule looks (a contact line): only its variable's name says it is a secret.
  const VAR_COMMUNITY = 'VarC0mmS3cret';
  const STACK_KEY = 'StackTacS3cret';
  const source = 'snmp-server community {{ snmp_community }} RO\nsnmp-server contact {{ tacacs_key }}\nsnmp-server location {{ where }}\n';
  let stack: { id: string };
  const values = () => ({ '0': { devices: [device.id], shared_vars: { snmp_community: VAR_COMMUNITY, where: 'rack-7' } } });
  const noVariableSecret = (text: string, where: string) => {
    for (const secret of [VAR_COMMUNITY, STACK_KEY]) expect(text, `${where} shows ${secret}`).not.toContain(secret);
  };

  beforeAll(async () => {
    const tpl = await asAdmin(
      'POST',
      '/api/config/templates',
      { name: 'community', platform: 'vendor_xe-netconf', config_format: 'cli', source },
      201,
    );
    stack = await asAdmin(
      'POST',
      '/api/config/stacks',
      { name: 'community', services: [{ template_id: tpl.id, variables: { tacacs_key: STACK_KEY } }] },
      201,
    );
  });

  it("masks a deployment's secret variables and its rendered configs, with the same mask as a config shows; reveal=true for configs.secrets", async () => {
    const created = await asAdmin(
      'POST',
      '/api/config/deployments',
      { stack_id: stack.id, name: 'community', dry_run: true, target_devices: [{ device_id: device.id }], variable_values: values() },
      201,
    );
    await waitFor(c, org.token, created.id, ['dry_run_completed', 'dry_run_failed']);
    const shown = await asOperator(`/api/config/deployments/${created.id}`);
    const rendered: string = shown.devices[0].rendered_config;
    noVariableSecret(JSON.stringify(shown), 'the deployment');
    noVariableSecret(JSON.stringify(await asOperator('/api/config/deployments')), 'the deployment list');
    const mask: string = shown.variable_values['0'].shared_vars.snmp_community;
    expect(mask).toMatch(MASKED);
    expect(rendered).toContain(`snmp-server community ${mask} RO`);
    expect(rendered).toContain('snmp-server location rack-7');
    expect(shown.variable_values['0'].shared_vars.where).toBe('rack-7');
    // The stack's default key is masked where the template put it, though no config rule knows the line.
    expect(rendered).toMatch(/^snmp-server contact <secret:[0-9a-f]{8}>$/m);

    const revealed = await asAdmin('GET', `/api/config/deployments/${created.id}?reveal=true`);
    expect(revealed.devices[0].rendered_config).toContain(`snmp-server community ${VAR_COMMUNITY} RO`);
    expect(revealed.devices[0].rendered_config).toContain(`snmp-server contact ${STACK_KEY}`);
    expect(revealed.variable_values['0'].shared_vars.snmp_community).toBe(VAR_COMMUNITY);
    expect((await c.request('GET', `/api/config/deployments/${created.id}?reveal=true`, { token: operator })).status).toBe(403);
  });

  it('masks a stack render and the stack itself; a stack saved back as read keeps its secret', async () => {
    const render = await api(c, operator, 'POST', `/api/config/stacks/${stack.id}/render`, { variable_values: values() });
    noVariableSecret(JSON.stringify(render), 'the render');
    const read = await asOperator(`/api/config/stacks/${stack.id}`);
    expect(read.services[0].variables.tacacs_key).toMatch(MASKED);
    noVariableSecret(JSON.stringify(await asOperator('/api/config/stacks')), 'the stack list');
    await asAdmin('PUT', `/api/config/stacks/${stack.id}`, { services: read.services, description: 'saved as read' });
    const stored = await c.db('stacks').where({ id: stack.id }).first('services');
    expect(stored.services[0].variables.tacacs_key).toBe(STACK_KEY);
    // A service added before it, as the stack editor may: its mask still stands for its value.
    const tpl = read.services[0].template_id;
    await asAdmin('PUT', `/api/config/stacks/${stack.id}`, { services: [{ template_id: tpl, variables: { where: 'x' } }, read.services[0]] });
    const moved = await c.db('stacks').where({ id: stack.id }).first('services');
    expect(moved.services[1].variables.tacacs_key).toBe(STACK_KEY);
    await asAdmin('PUT', `/api/config/stacks/${stack.id}`, { services: [read.services[0]] });
  });

  it('masks a secret variable quoted by a refused line in the device error and the deployment log, on the agent', async () => {
    const tpl = await asAdmin(
      'POST',
      '/api/config/templates',
      { name: 'refused', platform: 'vendor_xe-netconf', config_format: 'cli', source: 'frobnicate {{ snmp_community }}\n' },
      201,
    );
    const refusing = await asAdmin('POST', '/api/config/stacks', { name: 'refused', services: [{ template_id: tpl.id }] }, 201);
    const created = await asAdmin(
      'POST',
      '/api/config/deployments',
      { stack_id: refusing.id, name: 'refused', target_devices: [{ device_id: device.id }], variable_values: values() },
      201,
    );
    const done = await waitFor(c, org.token, created.id);
    expect(done.status).toBe('failed');
    // The device quoted the line; the agent masked the value before it reported the error, as it
    // masks the device's credentials, so neither the stored error nor the live stream holds it.
    const raw = await c.db('deployment_devices').where({ deployment_id: created.id }).first('error_message');
    expect(raw.error_message).toContain("'frobnicate ********'");
    const stored = await c.db('deployment_logs').where({ deployment_id: created.id }).select('message');
    noVariableSecret(JSON.stringify(stored), 'the stored deployment log');
    const shown = await asOperator(`/api/config/deployments/${created.id}`);
    noVariableSecret(JSON.stringify(shown), 'the failed deployment');
    noVariableSecret(JSON.stringify(await asOperator(`/api/config/deployments/${created.id}/logs`)), 'the deployment log');
  });

  it("keeps an instance's secrets when it is saved back as read, and refuses a mask that is not the stored value's", async () => {
    const body = { stack_id: stack.id, name: 'community-i', target_devices: [{ device_id: device.id }], variable_values: values() };
    const instance = await asAdmin('POST', '/api/config/instances', body, 201);
    expect(instance.variable_values['0'].shared_vars.snmp_community).toMatch(MASKED);
    const read = await asOperator(`/api/config/instances/${instance.id}`);
    noVariableSecret(JSON.stringify(read), 'the instance');
    noVariableSecret(JSON.stringify(await asOperator('/api/config/instances')), 'the instance list');

    read.variable_values['0'].shared_vars.where = 'rack-8';
    await asAdmin('PUT', `/api/config/instances/${instance.id}`, { variable_values: read.variable_values });
    const stored = await c.db('instances').where({ id: instance.id }).first('variable_values');
    expect(stored.variable_values['0'].shared_vars).toEqual({ snmp_community: VAR_COMMUNITY, where: 'rack-8' });

    // A mask that stands for another value, or sent where nothing is stored, would become the secret on the device.
    const other = structuredClone(read.variable_values);
    other['0'].shared_vars.snmp_community = '<secret:00000000>';
    const refused = await c.request('PUT', `/api/config/instances/${instance.id}`, { token: org.token, body: { variable_values: other } });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('SECRET_MASK_NOT_STORED');
    expect(refused.body.error).toContain('variable_values.0.shared_vars.snmp_community');
    // Deploying it (a dry run) answers with the deployment, its secrets masked too.
    const run = await api(c, operator, 'POST', `/api/config/instances/${instance.id}/deploy`, { dry_run: true }, 201);
    noVariableSecret(JSON.stringify(run), 'the instance deploy answer');
    await waitFor(c, org.token, run.id, ['dry_run_completed', 'dry_run_failed']);
    const deploy = { stack_id: stack.id, name: 'masked', target_devices: [{ device_id: device.id }], variable_values: read.variable_values };
    const masked = await c.request('POST', '/api/config/deployments', { token: org.token, body: deploy });
    expect(masked.status, masked.text).toBe(400);
    expect(masked.body.code).toBe('SECRET_MASK_NOT_STORED');
    expect((await c.db('instances').where({ id: instance.id }).first('variable_values')).variable_values['0'].shared_vars.snmp_community).toBe(
      VAR_COMMUNITY,
    );
  });
});

describe('a holder of configs.secrets', () => {
  it('reads the stored config with reveal=true, and nothing else changes', async () => {
    const revealed = (await asAdmin('GET', `/api/config/devices/${device.id}/configs/1?reveal=true`)).config_text as string;
    for (const secret of SECRETS) expect(revealed).toContain(secret);
    const diff = await asAdmin('GET', `/api/config/devices/${device.id}/diff-versions?old_version=1&new_version=2&reveal=true`);
    expect(diff.diff).toContain(`priv aes 128 ${ROTATED}`);
    // Without reveal the admin sees what the operator sees; reveal is refused to the operator.
    expectNoSecret((await asAdmin('GET', `/api/config/devices/${device.id}/configs/1`)).config_text, 'the admin without reveal');
    const refused = await c.request('GET', `/api/config/devices/${device.id}/configs/1?reveal=true`, { token: operator });
    expect(refused.status).toBe(403);
    const xml = (await asAdmin('GET', `/api/config/devices/${ncDevice.id}/configs/latest?reveal=true`)).config_text as string;
    for (const secret of NC_SECRETS) expect(xml).toContain(secret);
  });
});
