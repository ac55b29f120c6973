/**
 * SSH CLI driver against the SSH device simulator, over real SSH sessions on loopback:
 * every dialect, every fault mode, every auth method, transcript masking.
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:net';
import type { Algorithms } from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSshCliDriver, getDialect, sshCliDriver, type SshCliSessionApi } from '../../agent/src/drivers/ssh';
import { DriverError, type DeviceCredentials, type SessionLimits } from '../../agent/src/drivers/types';
import { sshTarget, startSshDevice, type SimSshDevice, type SshDeviceOptions } from '../sim/ssh';
import { readableKeyPair } from '../sim/ssh/device';

const DIALECTS = [
  'vendor_ios',
  'vendor_nxos',
  'vendor_xe',
  'vendor_xr',
  'vendor_junos',
  'vendor_eos',
  'vendor_panos',
  'vendor_fw',
  'generic',
  'custom',
];
const ENABLE_DIALECTS = ['vendor_ios', 'vendor_xe', 'vendor_eos'];

const PASSWORD = 'Pw-9f3!xyz';
const ENABLE = 'En-7k2$abc';
const CREDS: DeviceCredentials = { username: 'netops', password: PASSWORD, enable_password: ENABLE };
const LIMITS: Partial<SessionLimits> = { connectTimeoutMs: 5000, commandTimeoutMs: 5000, idleTimeoutMs: 5000, keepaliveIntervalMs: 5000 };

const sha = (t: string) => createHash('sha256').update(t).digest('hex');

interface Recorded {
  entries: Array<{ direction: string; text: string }>;
  write(direction: 'sent' | 'received' | 'info', text: string): void;
  all(): string;
}
function transcript(): Recorded {
  const entries: Recorded['entries'] = [];
  return {
    entries,
    write: (direction, text) => entries.push({ direction, text }),
    all: () => entries.map((e) => `${e.direction}: ${e.text}`).join('\n'),
  };
}

const devices: SimSshDevice[] = [];
async function device(opts: SshDeviceOptions = {}): Promise<SimSshDevice> {
  const d = await startSshDevice({ username: 'netops', password: PASSWORD, enablePassword: ENABLE, ...opts });
  devices.push(d);
  return d;
}
afterAll(async () => {
  await Promise.all(devices.map((d) => d.close()));
});

/** Runs `fn` with an open session and always closes it. */
async function withSession<T>(
  dev: SimSshDevice,
  fn: (s: SshCliSessionApi) => Promise<T>,
  creds = CREDS,
  limits = LIMITS,
  log?: Recorded,
): Promise<T> {
  const s = await sshCliDriver.open(sshTarget(dev, creds), limits, log);
  try {
    return await fn(s);
  } finally {
    await s.close();
  }
}

/** Pulls the config in one session with a transcript; returns the text and the transcript. */
async function pullLogged(dev: SimSshDevice, creds = CREDS): Promise<{ text: string; log: string }> {
  const t = transcript();
  const cfg = await withSession(dev, (s) => s.fetchConfig(), creds, LIMITS, t);
  return { text: cfg.text, log: t.all() };
}

/** The DriverError a promise rejects with (fails the test if it resolves or throws something else). */
async function driverError(p: Promise<unknown>): Promise<DriverError> {
  const e = await p.then(
    () => {
      throw new Error('expected a DriverError, but the call succeeded');
    },
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(DriverError);
  return e as DriverError;
}

function expectCleanText(text: string, hostname: string): void {
  expect(text).not.toMatch(/\x1b|\r|\x08/);
  expect(text).not.toMatch(/--More--|---\(more|lines \d+-\d+/);
  // No prompt line of this device (prompts end in > # or $ right after the hostname).
  expect(text).not.toMatch(new RegExp(`^\\S*${hostname}(\\([^)]*\\))? ?[>#$] ?$`, 'm'));
}

describe.each(DIALECTS)('dialect %s', (dialect) => {
  let dev: SimSshDevice;
  let pagerDev: SimSshDevice;
  beforeAll(async () => {
    dev = await device({ dialect, hostname: `core-${dialect.replace('_', '-')}` });
    pagerDev = await device({ dialect, hostname: `edge-${dialect.replace('_', '-')}`, ignorePagerOff: true });
  });

  it('logs in, pulls a clean config, and an unchanged device gives the same hash despite its clock', async () => {
    const [a, b] = await withSession(dev, async (s) => [await s.fetchConfig(), await s.fetchConfig()]);
    expect(a.format).toBe('cli');
    expect(a.via).toBe('ssh');
    expect(a.text).toBe(dev.config());
    expect(a.text.length).toBeGreaterThan(2000);
    expectCleanText(a.text, dev.hostname);
    expect(sha(b.text)).toBe(sha(a.text));
    // A second session sees a fresh clock too and still the same text.
    const c = await withSession(dev, (s) => s.fetchConfig());
    expect(sha(c.text)).toBe(sha(a.text));
  });

  it('answers the pager when the device keeps paging after the pager-off command', async () => {
    const t = transcript();
    const s = await sshCliDriver.open(sshTarget(pagerDev, CREDS), LIMITS, t);
    try {
      const cfg = await s.fetchConfig();
      expect(cfg.text).toBe(pagerDev.config());
      expectCleanText(cfg.text, pagerDev.hostname);
      const version = await s.run(getDialect(dialect).showVersion);
      expect(version).toContain(pagerDev.hostname);
    } finally {
      await s.close();
    }
    expect(t.entries.filter((e) => e.direction === 'info' && /pager prompt answered/.test(e.text)).length).toBeGreaterThan(3);
  });

  it('run() returns a show command without echo, prompt or noise', async () => {
    const cmd = getDialect(dialect).showVersion;
    const out = await withSession(dev, (s) => s.run(cmd));
    expect(out).toContain(dev.hostname);
    const lines = out.split('\n');
    expect(lines[0]).not.toContain(cmd);
    expect(lines[0].trim()).not.toBe('');
    expect(lines.at(-1)!.trim()).not.toBe('');
    expect(out).not.toMatch(/\{master:0\}|\[edit\]/);
    expectCleanText(out, dev.hostname);
  });

  it("surfaces the device's error for an unknown command as kind 'device', and the session stays usable", async () => {
    await withSession(dev, async (s) => {
      const e = await driverError(s.run('show bogus-thing'));
      expect(e.kind).toBe('device');
      expect(e.message).toContain("'show bogus-thing'");
      expect(e.message).toMatch(/Invalid|Unknown|unknown|parse error/);
      expect(e.message).toContain(dev.hostname);
      expect((await s.fetchConfig()).text).toBe(dev.config());
    });
  });

  it('commands run one at a time even when called concurrently', async () => {
    const cmd = getDialect(dialect).showVersion;
    const [v, cfg, v2] = await withSession(dev, (s) => Promise.all([s.run(cmd), s.fetchConfig(), s.run(cmd)]));
    expect(v).toContain(dev.hostname);
    expect(v2).toContain(dev.hostname);
    expect(cfg.text).toBe(dev.config());
  });
});

describe('enable', () => {
  it.each(ENABLE_DIALECTS)('%s: enters privileged mode with the enable password (config needs it)', async (dialect) => {
    const dev = await device({ dialect, hostname: 'en-ok' });
    const { text, log } = await pullLogged(dev);
    expect(text).toBe(dev.config());
    expect(log).toMatch(/info: enabled/);
  });

  it.each(ENABLE_DIALECTS)("%s: a wrong enable password is an 'auth' error naming enable", async (dialect) => {
    const dev = await device({ dialect, hostname: 'en-bad' });
    const e = await driverError(sshCliDriver.open(sshTarget(dev, { ...CREDS, enable_password: 'wrong-one' }), LIMITS));
    expect(e.kind).toBe('auth');
    expect(e.message).toMatch(/enable failed/);
    expect(e.message).toContain('en-bad');
  });

  it("a device asking for an enable password when the profile has none is an 'auth' error", async () => {
    const dev = await device({ dialect: 'vendor_ios', hostname: 'en-none' });
    const e = await driverError(sshCliDriver.open(sshTarget(dev, { username: 'netops', password: PASSWORD }), LIMITS));
    expect(e.kind).toBe('auth');
    expect(e.message).toMatch(/enable password/);
  });

  it('enable without a password prompt (device has no enable secret) just works', async () => {
    const dev = await device({ dialect: 'vendor_eos', hostname: 'en-open', enablePassword: undefined });
    const cfg = await withSession(dev, (s) => s.fetchConfig(), { username: 'netops', password: PASSWORD });
    expect(cfg.text).toBe(dev.config());
  });
});

describe('authentication methods', () => {
  it('private key (publickey auth only)', async () => {
    const keys = readableKeyPair();
    const dev = await device({ authMethods: ['publickey'], authorizedKeys: [keys.public], hostname: 'pk' });
    const { text, log } = await pullLogged(dev, { username: 'netops', private_key: keys.private, enable_password: ENABLE });
    expect(text).toBe(dev.config());
    expect(log).toMatch(/authenticated as netops \(publickey\)/);
  });

  it("a key the device does not know is an 'auth' error", async () => {
    const known = readableKeyPair();
    const other = readableKeyPair();
    const dev = await device({ authMethods: ['publickey'], authorizedKeys: [known.public], hostname: 'pk-bad' });
    const e = await driverError(sshCliDriver.open(sshTarget(dev, { username: 'netops', private_key: other.private }), LIMITS));
    expect(e.kind).toBe('auth');
    expect(e.message).toMatch(/authentication failed for user 'netops' \(tried publickey\)/);
  });

  it("an unparseable private key is an 'auth' error that says so", async () => {
    const dev = await device({ hostname: 'pk-junk' });
    const e = await driverError(sshCliDriver.open(sshTarget(dev, { username: 'netops', private_key: 'not a key' }), LIMITS));
    expect(e.kind).toBe('auth');
    expect(e.message).toMatch(/private key .* cannot be used/);
  });

  it('keyboard-interactive only', async () => {
    const dev = await device({ authMethods: ['keyboard-interactive'], hostname: 'kbd' });
    const { text, log } = await pullLogged(dev);
    expect(text).toBe(dev.config());
    expect(log).toMatch(/authenticated as netops \(keyboard-interactive\)/);
  });

  it('password only', async () => {
    const dev = await device({ authMethods: ['password'], hostname: 'pw' });
    const { text, log } = await pullLogged(dev);
    expect(text).toBe(dev.config());
    expect(log).toMatch(/authenticated as netops \(password\)/);
  });

  it("a wrong password is an 'auth' error", async () => {
    const dev = await device({ hostname: 'pw-bad' });
    const e = await driverError(sshCliDriver.open(sshTarget(dev, { ...CREDS, password: 'nope' }), LIMITS));
    expect(e.kind).toBe('auth');
    expect(e.message).toMatch(/authentication failed for user 'netops'/);
  });

  it("credentials with neither password nor key are an 'auth' error", async () => {
    const dev = await device({ hostname: 'no-creds' });
    const e = await driverError(sshCliDriver.open(sshTarget(dev, { username: 'netops' }), LIMITS));
    expect(e.kind).toBe('auth');
    expect(e.message).toMatch(/neither a password nor a private key/);
  });
});

describe('transcript', () => {
  it('records commands and output with every secret masked', async () => {
    const dev = await device({ dialect: 'vendor_ios', hostname: 'tx' });
    // A device that prints the secrets back (some do, in config or banners).
    dev.addCommand('show secrets', () => `login ${PASSWORD}\nenable ${ENABLE}\n`);
    const t = transcript();
    const s = await sshCliDriver.open(sshTarget(dev, CREDS), LIMITS, t);
    try {
      expect(await s.run('show secrets')).toBe(`login ${PASSWORD}\nenable ${ENABLE}`);
      await s.fetchConfig();
    } finally {
      await s.close();
    }
    const all = t.all();
    expect(all).not.toContain(PASSWORD);
    expect(all).not.toContain(ENABLE);
    expect(t.entries.some((e) => e.direction === 'sent' && e.text.includes('********'))).toBe(true);
    expect(t.entries.some((e) => e.direction === 'received' && e.text.includes('login ********'))).toBe(true);
    expect(t.entries.some((e) => e.direction === 'sent' && e.text.includes('show running-config'))).toBe(true);
    expect(t.entries.some((e) => e.direction === 'received' && e.text.includes('hostname tx'))).toBe(true);
  });
});

describe('old firmware', () => {
  const OLD: Algorithms = { kex: ['diffie-hellman-group14-sha1'], cipher: ['aes128-cbc'], hmac: ['hmac-sha1'] };

  it('connects to a device that offers only legacy key exchange, cipher and MAC', async () => {
    const dev = await device({ hostname: 'old-fw', algorithms: OLD });
    expect((await withSession(dev, (s) => s.fetchConfig())).text).toBe(dev.config());
  });

  it("with legacy algorithms turned off the handshake fails as 'protocol'", async () => {
    const dev = await device({ hostname: 'old-fw2', algorithms: OLD });
    const e = await driverError(createSshCliDriver({ legacyAlgorithms: false }).open(sshTarget(dev, CREDS), LIMITS));
    expect(e.kind).toBe('protocol');
    expect(e.message).toMatch(/old-fw2 .*SSH protocol error: .*no matching/i);
  });
});

describe('secrets in error messages', () => {
  it('a device error that repeats a secret is masked in the DriverError message', async () => {
    const dev = await device({ dialect: 'vendor_panos', hostname: 'tx-err' });
    const e = await withSession(dev, (s) => driverError(s.run(`show ${ENABLE}`)));
    expect(e.kind).toBe('device');
    expect(e.message).not.toContain(ENABLE);
    expect(e.message).toContain("rejected 'show ********': Unknown command: ********");
  });
});

describe('fault modes and limits', () => {
  const SHORT: Partial<SessionLimits> = { connectTimeoutMs: 400, commandTimeoutMs: 600, idleTimeoutMs: 300, keepaliveIntervalMs: 5000 };

  it("refused: nothing listening is 'refused'", async () => {
    const srv = createServer();
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
    const port = (srv.address() as { port: number }).port;
    await new Promise<void>((r) => srv.close(() => r()));
    const dev = await device({ hostname: 'gone' });
    const e = await driverError(sshCliDriver.open(sshTarget(dev, CREDS, { ports: { ssh: port, netconf: 830, gnmi: 9339 } }), SHORT));
    expect(e.kind).toBe('refused');
    expect(e.message).toContain(`127.0.0.1:${port}`);
    expect(e.message).toMatch(/connection refused/);
  });

  it("wrong password fault: the device rejects every login → 'auth'", async () => {
    const dev = await device({ hostname: 'f-auth', faults: { rejectAuth: true } });
    const e = await driverError(sshCliDriver.open(sshTarget(dev, CREDS), SHORT));
    expect(e.kind).toBe('auth');
    expect(e.message).toMatch(/f-auth .*authentication failed for user 'netops' \(tried password, keyboard-interactive\)/);
  });

  it("hang: login works but no prompt ever comes → 'timeout' naming the connect limit", async () => {
    const dev = await device({ hostname: 'f-hang', faults: { hang: true } });
    const e = await driverError(sshCliDriver.open(sshTarget(dev, CREDS), { ...SHORT, idleTimeoutMs: 5000 }));
    expect(e.kind).toBe('timeout');
    expect(e.message).toMatch(/f-hang .*timed out waiting for the first prompt \(connect timeout 400 ms; nothing received\)/);
  });

  it("hang with a shorter idle limit → 'timeout' naming the idle limit", async () => {
    const dev = await device({ hostname: 'f-hang2', faults: { hang: true } });
    const e = await driverError(sshCliDriver.open(sshTarget(dev, CREDS), { ...SHORT, connectTimeoutMs: 5000, idleTimeoutMs: 200 }));
    expect(e.kind).toBe('timeout');
    expect(e.message).toMatch(/device silent for 200 ms while waiting for the first prompt \(idle timeout/);
  });

  it("slow accept: SSH version line never arrives in time → 'timeout' naming the connect limit", async () => {
    const dev = await device({ hostname: 'f-accept', faults: { slowAcceptMs: 10_000 } });
    const e = await driverError(sshCliDriver.open(sshTarget(dev, CREDS), SHORT));
    expect(e.kind).toBe('timeout');
    expect(e.message).toMatch(/connect timed out after 400 ms/);
  });

  it('slow accept within the connect limit still connects', async () => {
    const dev = await device({ hostname: 'f-accept-ok', faults: { slowAcceptMs: 100 } });
    const cfg = await withSession(dev, (s) => s.fetchConfig());
    expect(cfg.text).toBe(dev.config());
  });

  it("disconnect mid-output → 'protocol' naming the command, and later calls fail fast", async () => {
    const dev = await device({ hostname: 'f-drop', faults: { disconnectMidOutput: true } });
    const s = await sshCliDriver.open(sshTarget(dev, CREDS), LIMITS);
    const e = await driverError(s.fetchConfig());
    expect(e.kind).toBe('protocol');
    expect(e.message).toMatch(/f-drop .*connection closed by the device while waiting for the output of 'show running-config' \(.* received\)/);
    const again = await driverError(s.run('show version'));
    expect(again.kind).toBe('protocol');
    await s.close();
  });

  it('very slow output in tiny chunks (split UTF-8, split prompts) is reassembled exactly', async () => {
    const dev = await device({ hostname: 'f-slow', configScale: 2, faults: { slowOutput: { chunkBytes: 7, intervalMs: 1 } } });
    // Before the final `end`, where IOS prints it: a config after its `end` reads as one cut short.
    dev.setConfig(dev.config().replace(/^end\n$/m, 'interface Gi0/9\n description Zürich – façade ✓\n!\nend\n'));
    const cfg = await withSession(dev, (s) => s.fetchConfig());
    expect(cfg.text).toBe(dev.config());
    expect(cfg.text).toContain('Zürich – façade ✓');
  });

  it("slow output beyond the command limit → 'timeout' naming the command and the command limit", async () => {
    const dev = await device({ hostname: 'f-trickle', faults: { slowOutput: { chunkBytes: 64, intervalMs: 20 } } });
    // The idle limit is far above the 20 ms between chunks, so only the command limit can trip, even
    // on a loaded machine; show version (~0.5 KiB) fits 1.5 s with room to spare.
    const s = await sshCliDriver.open(sshTarget(dev, CREDS), { connectTimeoutMs: 5000, commandTimeoutMs: 1500, idleTimeoutMs: 10_000 });
    expect(await s.run('show version')).toContain('f-trickle');
    // The config (~8 KiB at 64 bytes per 20 ms) needs at least 2.5 s: it cannot arrive within 1.5 s.
    const e = await driverError(s.fetchConfig());
    await s.close();
    expect(e.kind).toBe('timeout');
    expect(e.message).toMatch(/f-trickle .*timed out waiting for the output of 'show running-config' \(command timeout 1500 ms; .* KiB received\)/);
  });

  it("output that pauses longer than the idle limit → 'timeout' naming the idle limit", async () => {
    const dev = await device({ hostname: 'f-pause', faults: { slowOutput: { chunkBytes: 4096, intervalMs: 400 } } });
    const e = await driverError(sshCliDriver.open(sshTarget(dev, CREDS), { connectTimeoutMs: 5000, commandTimeoutMs: 5000, idleTimeoutMs: 150 }));
    expect(e.kind).toBe('timeout');
    expect(e.message).toMatch(/device silent for 150 ms while waiting for .* \(idle timeout/);
  });

  it("garbage in the shell (binary and ANSI noise) → 'protocol'", async () => {
    const dev = await device({ hostname: 'f-garbage', faults: { garbage: 'shell' } });
    const e = await driverError(sshCliDriver.open(sshTarget(dev, CREDS), { ...SHORT, connectTimeoutMs: 5000, idleTimeoutMs: 5000 }));
    expect(e.kind).toBe('protocol');
    expect(e.message).toMatch(/f-garbage .*binary data, not CLI text/);
  });

  it("garbage after the SSH version line → 'protocol'", async () => {
    const dev = await device({ hostname: 'f-garbage-tx', faults: { garbage: 'transport' } });
    const e = await driverError(sshCliDriver.open(sshTarget(dev, CREDS), { ...SHORT, connectTimeoutMs: 5000 }));
    expect(e.kind).toBe('protocol');
    expect(e.message).toContain('f-garbage-tx');
  });

  it("output larger than the size bound → 'protocol' and the session is dropped", async () => {
    const dev = await device({ hostname: 'f-huge', configScale: 400 });
    const driver = createSshCliDriver({ maxOutputBytes: 16 * 1024 });
    const s = await driver.open(sshTarget(dev, CREDS), LIMITS);
    const e = await driverError(s.fetchConfig());
    expect(e.kind).toBe('protocol');
    expect(e.message).toMatch(/output exceeded the 16 KiB limit while waiting for the output of 'show running-config'/);
    await s.close();
  });

  it("a device that stops answering mid-session → keepalive 'timeout'; close() still returns", async () => {
    const dev = await device({ hostname: 'f-dead' });
    const driver = createSshCliDriver({ closeGraceMs: 200 });
    const s = await driver.open(sshTarget(dev, CREDS), {
      connectTimeoutMs: 5000,
      commandTimeoutMs: 20_000,
      idleTimeoutMs: 20_000,
      keepaliveIntervalMs: 100,
    });
    dev.freeze();
    const e = await driverError(s.run('show version'));
    expect(e.kind).toBe('timeout');
    expect(e.message).toMatch(/f-dead .*no answer to 3 keepalives sent every 100 ms \(keepalive timeout\)/);
    await s.close();
  });

  it('close() returns even when the device never acknowledges the disconnect', async () => {
    const dev = await device({ hostname: 'f-close' });
    const driver = createSshCliDriver({ closeGraceMs: 100 });
    const s = await driver.open(sshTarget(dev, CREDS), LIMITS);
    dev.freeze();
    await s.close();
    await s.close(); // idempotent
    const e = await driverError(s.run('show version'));
    expect(e.message).toMatch(/session is closed/);
  });
});
