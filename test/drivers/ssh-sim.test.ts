/**
 * The SSH device simulator itself: fleets (shared host key, ports or loopback addresses),
 * the extensible command table, config mode, the exec channel, and `npm run sim`.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import ssh2 from 'ssh2';
import { afterAll, describe, expect, it } from 'vitest';
import { sshCliDriver } from '../../agent/src/drivers/ssh';
import { registerSshCommand, sshTarget, startSshDevice, startSshFleet, type SimSshDevice } from '../sim/ssh';

const CREDS = { username: 'admin', password: 'sim-pass', enable_password: 'sim-enable' };
const DEVICE = { username: 'admin', password: 'sim-pass', enablePassword: 'sim-enable' };

const started: Array<{ close(): Promise<void> }> = [];
afterAll(async () => {
  await Promise.all(started.map((d) => d.close()));
});

/** The host key a device presents (sha256 hex), after a full login. */
function hostKeyOf(dev: SimSshDevice): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = new ssh2.Client();
    let key = '';
    c.on('ready', () => {
      c.end();
      resolve(key);
    });
    c.on('error', reject);
    c.connect({
      host: dev.host,
      port: dev.port,
      username: 'admin',
      password: 'sim-pass',
      hostHash: 'sha256',
      hostVerifier: (hash: string) => {
        key = hash;
        return true;
      },
    });
  });
}

function exec(dev: SimSshDevice, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = new ssh2.Client();
    c.on('ready', () =>
      c.exec(command, (err, stream) => {
        if (err) return reject(err);
        let out = '';
        stream.on('data', (d: Buffer) => (out += d.toString()));
        stream.on('close', () => {
          c.end();
          resolve(out);
        });
      }),
    );
    c.on('error', reject);
    c.connect({ host: dev.host, port: dev.port, username: 'admin', password: 'sim-pass' });
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

describe('fleet', () => {
  it('starts many devices on distinct ports sharing one host key, with cycled dialects', async () => {
    const fleet = await startSshFleet(300, { ...DEVICE, dialects: ['vendor_ios', 'vendor_junos', 'vendor_fw'], hostnamePrefix: 'fl' });
    started.push(fleet);
    expect(fleet.devices).toHaveLength(300);
    expect(new Set(fleet.devices.map((d) => d.port)).size).toBe(300);
    expect(fleet.devices.slice(0, 4).map((d) => [d.hostname, d.deviceType])).toEqual([
      ['fl-1', 'vendor_ios'],
      ['fl-2', 'vendor_junos'],
      ['fl-3', 'vendor_fw'],
      ['fl-4', 'vendor_ios'],
    ]);
    const [k1, k2] = await Promise.all([hostKeyOf(fleet.devices[0]), hostKeyOf(fleet.devices[299])]);
    expect(k1).toMatch(/^[0-9a-f]{64}$/);
    expect(k2).toBe(k1);
    const cfg = await sshCliDriver.open(sshTarget(fleet.devices[1], CREDS)).then(async (s) => {
      try {
        return await s.fetchConfig();
      } finally {
        await s.close();
      }
    });
    expect(cfg.text).toBe(fleet.devices[1].config());
    expect(cfg.text).toContain('host-name fl-2;');
  });

  it('spreadHosts puts each device on its own loopback address and one port', async () => {
    const port = await freePort();
    const fleet = await startSshFleet(3, { ...DEVICE, spreadHosts: true, basePort: port, hostnamePrefix: 'sp' });
    started.push(fleet);
    expect(fleet.devices.map((d) => `${d.host}:${d.port}`)).toEqual([`127.0.0.1:${port}`, `127.0.0.2:${port}`, `127.0.0.3:${port}`]);
    const out = await exec(fleet.devices[2], 'show version');
    expect(out).toContain('sp-3 uptime is');
  });
});

describe('command table and modes', () => {
  it('commands registered for a device type reach running devices, with abbreviations', async () => {
    const dev = await startSshDevice({ ...DEVICE, hostname: 'tbl' });
    started.push(dev);
    const undo = registerSshCommand('vendor_ios', 'show vlan brief', (ctx) => `VLAN Name\n---- ----\n10   users-${ctx.hostname}\n`);
    dev.addCommand('show arp', (ctx) => `Internet  10.0.0.1  0  aabb.cc00.0100  ARPA  Vlan10 ${ctx.args}\n`, { minMode: 'priv' });
    const s = await sshCliDriver.open(sshTarget(dev, CREDS));
    try {
      expect(await s.run('sh vlan br')).toBe('VLAN Name\n---- ----\n10   users-tbl');
      expect(await s.run('show arp vlan 10')).toBe('Internet  10.0.0.1  0  aabb.cc00.0100  ARPA  Vlan10 vlan 10');
    } finally {
      await s.close();
      undo(); // the discovery simulator's own 'show vlan brief' again, for the files after this one
    }
  });

  it('config mode: enter, sub-modes and exit are tracked through the prompts', async () => {
    const dev = await startSshDevice({ ...DEVICE, hostname: 'cfg' });
    started.push(dev);
    const s = await sshCliDriver.open(sshTarget(dev, CREDS));
    try {
      for (const line of ['configure terminal', 'interface GigabitEthernet0/1', ' description changed', 'exit', 'end']) {
        expect(await s.run(line)).toBe(line.startsWith('conf') ? 'Enter configuration commands, one per line.  End with CNTL/Z.' : '');
      }
      expect((await s.fetchConfig()).text).toBe(dev.config());
    } finally {
      await s.close();
    }
    expect(dev.configLog).toEqual(['interface GigabitEthernet0/1', 'description changed', 'exit', 'end']);
  });

  it('Junos-style configure / exit configuration-mode', async () => {
    const dev = await startSshDevice({ ...DEVICE, dialect: 'vendor_junos', hostname: 'jcfg' });
    started.push(dev);
    const s = await sshCliDriver.open(sshTarget(dev, CREDS));
    try {
      expect(await s.run('configure')).toBe('Entering configuration mode');
      expect(await s.run('set system host-name other')).toBe('');
      expect(await s.run('exit configuration-mode')).toBe('Exiting configuration mode');
      expect(await s.run('show version')).toContain('Hostname: jcfg');
    } finally {
      await s.close();
    }
  });

  it('FortiOS-style blocks: nested prompts, next and end save, abort discards, a refused line leaves the level open', async () => {
    const dev = await startSshDevice({ ...DEVICE, dialect: 'vendor_fw', hostname: 'fwsim', configScale: 2 });
    started.push(dev);
    const original = dev.config();
    const prompts: string[] = [];
    const log = { write: (d: string, t: string) => d === 'received' && prompts.push(...t.split(/\r?\n/).filter((l) => / # $/.test(l))) };
    const s = await sshCliDriver.open(sshTarget(dev, CREDS), {}, log);
    const typed = async (...lines: string[]) => {
      for (const line of lines) expect(await s.run(line)).toBe('');
    };
    try {
      await typed('config system global', 'set timezone 12', 'abort');
      expect(dev.config()).toBe(original);
      prompts.length = 0;
      await typed('config system interface', 'edit "port1"', 'set alias "wan"');
      expect(prompts).toEqual(['fwsim (interface) # ', 'fwsim (port1) # ', 'fwsim (port1) # ']);
      await expect(s.run('set ip 10.1.1.256 255.255.255.0')).rejects.toThrow(/value parse error before '10\.1\.1\.256'/);
      expect(prompts.at(-1)).toBe('fwsim (port1) # '); // still open
      expect(dev.config()).toBe(original); // nothing saved before `next`
      await typed('next');
      const saved = dev.config();
      expect(saved).toMatch(/edit "port1"\n(?: {8}.*\n)* {8}set alias "wan"\n/);
      // An entry saved by `next` stays when its table is aborted; the entry open at the abort goes.
      await typed('edit "port2"', 'set alias "lan"', 'config ipv6', 'set ip6-address 2001:db8::1/64', 'abort');
      expect(prompts.at(-1)).toBe('fwsim (port2) # ');
      await typed('abort');
      expect(prompts.at(-1)).toBe('fwsim # ');
      expect(dev.config()).toBe(saved);
      // `end` in an entry saves it and leaves its table too, nested blocks included.
      await typed('config system interface', 'edit "port2"', 'config ipv6', 'set ip6-address 2001:db8::1/64', 'end', 'end');
      expect(prompts.slice(-2)).toEqual(['fwsim (port2) # ', 'fwsim # ']);
      expect(dev.config()).toMatch(/edit "port2"\n(?: {8}.*\n)* {8}config ipv6\n {12}set ip6-address 2001:db8::1\/64\n {8}end\n {4}next\n/);
      expect((await s.fetchConfig()).text).toBe(dev.config());
    } finally {
      await s.close();
    }
  });

  it('exec channel runs one command without a shell', async () => {
    const dev = await startSshDevice({ ...DEVICE, dialect: 'vendor_eos', hostname: 'ex' });
    started.push(dev);
    const out = await exec(dev, 'show running-config');
    expect(out).toContain('hostname ex\r\n');
    expect(out).toMatch(/! Time: /);
  });
});

describe('npm run sim', () => {
  it('prints a CSV for the device import and stays up until stopped', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'test/sim/main.ts', '--kind', 'ssh', '--devices', '3', '--dialect', 'vendor_ios,vendor_eos', '--csv'],
      {
        cwd: process.cwd(),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      // Up = every row on stdout and the closing note on stderr.
      await new Promise<void>((resolve, reject) => {
        const check = () => out.split('\n').length > 4 && err.includes('Ctrl-C to stop') && resolve();
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          check();
        });
        child.stderr.on('data', check);
        child.once('exit', (code) => reject(new Error(`sim exited early (${code}): ${err}`)));
      });
      const lines = out.trim().split('\n');
      expect(lines[0]).toBe('name,host,device_type,manufacturer,model,platform,site,description');
      expect(lines.slice(1).map((l) => l.split(',').slice(0, 3).join(','))).toEqual([
        'sim-1,127.0.0.1,vendor_ios',
        'sim-2,127.0.0.1,vendor_eos',
        'sim-3,127.0.0.1,vendor_ios',
      ]);
      const port = Number(/ssh port (\d+)/.exec(lines[2])![1]);
      const s = await sshCliDriver.open({
        id: 'sim-2',
        name: 'sim-2',
        host: '127.0.0.1',
        device_type: 'vendor_eos',
        credentials: { username: 'admin', password: 'admin' },
        ports: { ssh: port, netconf: 830, gnmi: 9339 },
        gnmi_tls: false,
        gnmi_skip_verify: false,
      });
      try {
        expect(await s.run('show version')).toContain('Hostname: sim-2');
      } finally {
        await s.close();
      }
      expect(err).toMatch(/3 ssh device\(s\) up .*Note: devices listen on different ports/);
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
  });
});
