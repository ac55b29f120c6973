/**
 * Long device texts are masked in worker threads (controller/src/configs/mask-pool.ts): the output
 * is the event loop's masking byte for byte, a view of a config packed with secrets leaves the
 * controller answering other requests while it is masked, and a text over the time limit fails
 * with a MaskError (503 on a view) while the pool goes on with the next one.
 */
import { createHash, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unifiedDiff } from '../../shared/src/diff/unified';
import { successfulVersion } from '../../controller/src/configs/backup-job';
import { maskConfigSecrets, maskDiffSecrets, secretMasker } from '../../controller/src/configs/config-secrets';
import { INLINE_BELOW, MaskError, MaskPool } from '../../controller/src/configs/mask-pool';
import { ConfigService } from '../../controller/src/configs/service';
import { SnapshotStore } from '../../controller/src/configs/snapshot-store';
import { startTestController, type TestController } from '../helpers/controller';
import { api, until } from '../deployments/helpers';

const KEY = Buffer.alloc(32, 5);
const mask = secretMasker(KEY);
const m = (value: string) => `<secret:${createHmac('sha256', KEY).update(value).digest('hex').slice(0, 8)}>`;
const CREDENTIALS = ['Pr0file-pass', '-----BEGIN KEY-----\nQUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZn\nxyz9\n-----END KEY-----'];

/** Copy `i` of a stretch of config in each dialect, its values numbered so that each copy's masks differ. */
const SAMPLES: Record<string, { format: string; deviceType: string; copy: (i: number) => string[] }> = {
  'IOS CLI': {
    format: 'cli',
    deviceType: 'vendor_ios',
    copy: (i) => [
      `hostname r${i}`,
      `enable secret 9 $9$Zk1H0w2Yb3mD${i}`,
      `username u${i} privilege 15 secret 9 $9$Q1w2E3r4${i}`,
      `snmp-server community c0mm${i} RO MGMT`,
      `snmp-server user mon grp v3 auth sha Auth${i} priv aes 128 Priv${i}`,
      ` neighbor 10.1.1.${i % 250} password 7 0458${i}`,
      ` description login Pr0file-pass on r${i}`,
      ` path ftp://backup:UrlPw${i}@192.0.2.20/cfg`,
    ],
  },
  'Junos set': {
    format: 'cli',
    deviceType: 'vendor_junos',
    copy: (i) => [
      `set system root-authentication encrypted-password "$6$abc${i}$def"`,
      `set snmp community pub${i} authorization read-only`,
      `set protocols bgp group g${i} authentication-key "$9$key${i}"`,
    ],
  },
  'PAN-OS set': {
    format: 'cli',
    deviceType: 'vendor_panos',
    copy: (i) => [`set mgt-config users admin${i} phash $1$abc${i}`, `set network ike gateway g${i} authentication pre-shared-key key Psk${i}`],
  },
  FortiOS: {
    format: 'cli',
    deviceType: 'vendor_fw',
    copy: (i) => [
      'config system snmp community',
      `    edit ${i}`,
      `        set name "Comm${i}"`,
      '    next',
      'end',
      'config user local',
      `    edit "u${i}"`,
      `        set passwd ENC Pw${i}`,
      '    next',
      'end',
    ],
  },
  'NETCONF XML': {
    format: 'xml',
    deviceType: 'vendor_junos',
    copy: (i) => [
      `<root-authentication><encrypted-password>$6$x${i}</encrypted-password></root-authentication>`,
      `<snmp><community><name>c${i}</name></community></snmp>`,
      '<radius-server><secret>',
      `  S${i}`,
      '</secret></radius-server>',
    ],
  },
  'gNMI JSON': {
    format: 'json',
    deviceType: 'openconfig',
    copy: (i) => [`{"config": {"password": "pw${i}", "auth-key": "k${i}"}},`, `{"community": "c${i}"},`],
  },
  'a transcript': {
    format: 'text',
    deviceType: 'generic',
    copy: (i) => [
      `r${i}#show running-config`,
      `enable secret 5 $1$t${i}`,
      `<password>x${i}</password>`,
      `"secret-key": "j${i}"`,
      `login Pr0file-pass`,
    ],
  },
};

/** Copies of a sample up to `chars` characters, beyond the event loop's share. */
function long(copy: (i: number) => string[], chars = 3 * INLINE_BELOW): string {
  const lines: string[] = [];
  for (let i = 0, size = 0; size < chars; i += 1) {
    const more = copy(i);
    lines.push(...more);
    size += more.join('\n').length + 1;
  }
  return lines.join('\n');
}

const MIB = 1 << 20;
/** A config packed with secrets, as a hostile device may send: ~0.8 s of masking per MiB. */
const packed = (size: number) => 'x $1$a\n'.repeat(Math.ceil(size / 7));
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

describe('a long text masked in a worker is the event loop masking, byte for byte', () => {
  const pool = new MaskPool(KEY);
  afterAll(() => pool.close());

  it.each(Object.keys(SAMPLES))('%s', async (name) => {
    const { format, deviceType, copy } = SAMPLES[name];
    const text = long(copy);
    const masked = pool.mask({ text, format, deviceType, credentials: CREDENTIALS });
    expect(pool.busy, 'sent to a worker').toBe(1);
    const out = await masked;
    expect(out).toBe(maskConfigSecrets(text, format, deviceType, mask, CREDENTIALS));
    expect(out).toMatch(/<secret:[0-9a-f]{8}>/);
  });

  it('gives a value the same mask in a long text as in a short one', async () => {
    const { copy } = SAMPLES['IOS CLI'];
    const job = { format: 'cli', deviceType: 'vendor_ios', credentials: CREDENTIALS };
    const short = pool.mask({ ...job, text: copy(3).join('\n') });
    expect(pool.busy, 'masked on the event loop').toBe(0);
    const [inWorker, onLoop] = await Promise.all([pool.mask({ ...job, text: long(copy) }), short]);
    expect(onLoop).toContain(`snmp-server community ${m('c0mm3')} RO MGMT`);
    expect(inWorker).toContain(`snmp-server community ${m('c0mm3')} RO MGMT`);
    expect(inWorker).toContain(' description login ******** on r3');
  });

  it('masks a long diff hunk by hunk, as maskDiffSecrets does on the event loop', async () => {
    const { copy } = SAMPLES['IOS CLI'];
    const before = long(copy, 8 * INLINE_BELOW);
    const after = before.replace(/community c0mm(\d*)5 RO/g, 'community n3w$1 RO').replace(/UrlPw(\d+)3@/g, 'UrlPw$1x@');
    const { diff } = unifiedDiff(before, after);
    expect(diff.length).toBeGreaterThan(INLINE_BELOW);
    const out = await pool.mask({ text: diff, diff: true, format: 'cli', deviceType: 'vendor_ios', credentials: CREDENTIALS });
    expect(out).toBe(maskDiffSecrets(diff, (text) => maskConfigSecrets(text, 'cli', 'vendor_ios', mask, CREDENTIALS)));
    expect(out).toContain(`+snmp-server community ${m('n3w1')} RO MGMT`);
  });
});

describe('two long versions diffed in a worker', () => {
  const pool = new MaskPool(KEY);
  afterAll(() => pool.close());

  it('is the event loop diff of the masked versions, byte for byte; revealed versions are diffed as they are', async () => {
    const { copy } = SAMPLES['IOS CLI'];
    const before = long(copy, 4 * INLINE_BELOW);
    const after = before.replace(/community c0mm(\d*)5 RO/g, 'community n3w$1 RO');
    const side = (text: string) => ({ text, format: 'cli', deviceType: 'vendor_ios', credentials: CREDENTIALS });
    const diffed = pool.diff({ before: side(before), after: side(after) });
    expect(pool.busy, 'sent to a worker').toBe(1);
    const onLoop = (text: string) => maskConfigSecrets(text, 'cli', 'vendor_ios', mask, CREDENTIALS);
    expect(await diffed).toEqual({ ...unifiedDiff(onLoop(before), onLoop(after)), identical: false });
    expect((await diffed).diff).toContain(`+snmp-server community ${m('n3w1')} RO MGMT`);
    expect(await pool.diff({ before, after })).toEqual({ ...unifiedDiff(before, after), identical: false });
    expect(await pool.diff({ before: side(before), after: side(before) })).toEqual({ diff: '', additions: 0, deletions: 0, identical: true });
  });
});

describe('a text over the time limit', () => {
  it('fails with a MaskError saying so; the worker is replaced and the next text is masked', async () => {
    const pool = new MaskPool(KEY, { size: 1, timeoutMs: 1_000 });
    try {
      const text = long(SAMPLES['Junos set'].copy);
      const [slow, next] = await Promise.allSettled([
        pool.mask({ text: packed(8 * MIB), format: 'cli', deviceType: 'generic', credentials: [] }),
        pool.mask({ text, format: 'cli', deviceType: 'vendor_junos', credentials: [] }),
      ]);
      expect(slow.status).toBe('rejected');
      const error = (slow as PromiseRejectedResult).reason as Error;
      expect(error).toBeInstanceOf(MaskError);
      expect(error.message).toBe('masking the secrets of 8.0 MiB of text took longer than 1 s; try again when the controller is less busy');
      expect(next).toEqual({ status: 'fulfilled', value: maskConfigSecrets(text, 'cli', 'vendor_junos', mask) });
      expect(pool.busy).toBe(0);
    } finally {
      await pool.close();
    }
  });
});

describe('viewing a config packed with secrets', () => {
  const PASSWORD = 'mask-pool-profile-pw';
  let c: TestController;
  let org: Awaited<ReturnType<TestController['createOrgUser']>>;
  let deviceId: string;
  let text: string;
  /** The second version: the last line changed. */
  let changed: string;

  beforeAll(async () => {
    c = await startTestController();
    org = await c.createOrgUser(['org_admin']);
    const name = `packed-${randomBytes(3).toString('hex')}`;
    const profile = await api(c, org.token, 'POST', '/api/profiles', { name: `p-${name}`, username: 'admin', password: PASSWORD }, 201);
    const device = await api(
      c,
      org.token,
      'POST',
      '/api/devices',
      { name, host: '192.0.2.77', device_type: 'vendor_ios', profile_id: profile.id },
      201,
    );
    deviceId = device.id;
    text = [`hostname ${name}`, `banner motd ${PASSWORD}`, packed(4 * MIB)].join('\n');
    const version = {
      org_id: org.orgId,
      device_id: deviceId,
      method: 'cli' as const,
      source: 'pull',
      snapshot_id: null,
      job_id: null,
      transcript: '',
    };
    changed = text.replace(/\n[^\n]*$/, '\nx $1$changed');
    await c.db.transaction((trx) =>
      c.services.configs.store.insertVersions(trx, [{ ...version, ...successfulVersion({ text, format: 'cli', via: 'ssh' }) }]),
    );
    await c.db.transaction((trx) =>
      c.services.configs.store.insertVersions(trx, [{ ...version, ...successfulVersion({ text: changed, format: 'cli', via: 'ssh' }) }]),
    );
  }, 120_000);

  afterAll(async () => {
    await c?.close();
  });

  it('leaves the controller answering while the config is masked, and shows it as the event loop would mask it', async () => {
    const { masks } = c.services.configs.shown;
    let viewed = false;
    const view = c.request('GET', `/api/config/devices/${deviceId}/configs/latest`, { token: org.token }).finally(() => (viewed = true));
    await until('the config to be in a worker', () => masks.busy > 0, 60_000, 5);
    const health = await c.request('GET', '/healthz');
    expect(health.status).toBe(200);
    expect(viewed, 'the view is still being masked').toBe(false);
    expect(masks.busy).toBeGreaterThan(0);

    const shown = await view;
    expect(shown.status, shown.text.slice(0, 300)).toBe(200);
    const key = Buffer.from(hkdfSync('sha256', c.config.secretKey, 'switchboard', 'config-secret-mask', 32));
    const expected = maskConfigSecrets(changed, 'cli', 'vendor_ios', secretMasker(key), [PASSWORD]);
    expect(shown.body.config_text.length).toBe(expected.length);
    expect(sha(shown.body.config_text), 'the same bytes as masking on the event loop').toBe(sha(expected));
    expect(shown.body.config_text.startsWith(`hostname packed-`)).toBe(true);
    expect(shown.body.config_text).toContain('banner motd ********\nx <secret:');
  }, 120_000);

  it('diffs two such versions in a worker while the controller answers, as the event loop would', async () => {
    const { masks } = c.services.configs.shown;
    let viewed = false;
    const view = c
      .request('GET', `/api/config/devices/${deviceId}/diff-versions?old_version=1&new_version=2`, { token: org.token })
      .finally(() => (viewed = true));
    await until('the versions to be in a worker', () => masks.busy > 0, 60_000, 5);
    expect((await c.request('GET', '/healthz')).status).toBe(200);
    expect(viewed, 'the diff is still being made').toBe(false);
    const shown = await view;
    expect(shown.status, shown.text.slice(0, 300)).toBe(200);
    const key = Buffer.from(hkdfSync('sha256', c.config.secretKey, 'switchboard', 'config-secret-mask', 32));
    const onLoop = (t: string) => maskConfigSecrets(t, 'cli', 'vendor_ios', secretMasker(key), [PASSWORD]);
    expect(shown.body).toMatchObject({ old_version: 1, new_version: 2, identical: false, ...unifiedDiff(onLoop(text), onLoop(changed)) });
    expect(shown.body.diff).toMatch(/^\+x <secret:[0-9a-f]{8}>$/m);
  }, 120_000);

  it('answers 503 saying why and what to do when the masking goes over the time limit', async () => {
    const masks = new MaskPool(randomBytes(32), { timeoutMs: 1_000 });
    try {
      const configs = c.services.configs;
      const service = new ConfigService(configs.store, new SnapshotStore(c.db), c.services.secrets, configs.jobs(), c.app.log, { masks });
      await expect(service.version(org.orgId, deviceId, null)).rejects.toMatchObject({
        status: 503,
        code: 'SERVICE_UNAVAILABLE',
        message:
          "The device's text is not shown: masking the secrets of 4.0 MiB of text took longer than 1 s; try again when the controller is less busy. " +
          'It is never shown unmasked; a stored config version can be read as stored with reveal=true (permission configs.secrets).',
      });
      const revealed = await service.version(org.orgId, deviceId, null, true);
      expect(revealed.config_text).toBe(changed);
    } finally {
      await masks.close();
    }
  }, 60_000);
});
