/**
 * The SSH CLI driver against a server nobody here wrote: Debian's OpenSSH sshd with a
 * ForceCommand script that behaves like a 'generic' dialect device. A kernel pty does the echo
 * and the line-end conversion; sshd prints its own pre-login banner and "Last login" lines.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sshCliDriver } from '../../agent/src/drivers/ssh';
import { DriverError, type DeviceTarget, type SessionLimits } from '../../agent/src/drivers/types';
import { startOpensshDevice, type OpensshPeer } from './fixtures/ssh/openssh';
import { readableKeyPair } from '../sim/ssh/device';
import { until } from '../agents/helpers';

const LIMITS: Partial<SessionLimits> = { connectTimeoutMs: 10_000, commandTimeoutMs: 10_000, idleTimeoutMs: 10_000, keepaliveIntervalMs: 5000 };

describe('OpenSSH sshd as the peer', () => {
  let peer: OpensshPeer;
  let target: DeviceTarget;

  beforeAll(async () => {
    peer = await startOpensshDevice();
    target = {
      id: 'openssh-1',
      name: 'ossh-sw1',
      host: peer.host,
      device_type: 'generic',
      credentials: { username: peer.username, private_key: peer.privateKey },
      ports: { ssh: peer.port, netconf: 830, gnmi: 9339 },
      gnmi_tls: false,
      gnmi_skip_verify: false,
    };
  });
  afterAll(async () => {
    await peer?.close();
  });

  it('logs in with a key and fetches a clean config that hashes the same on every pull', async () => {
    const transcript: string[] = [];
    const s = await sshCliDriver.open(target, LIMITS, { write: (d, t) => transcript.push(`${d}: ${t}`) });
    try {
      const a = await s.fetchConfig();
      const b = await s.fetchConfig();
      expect(a).toEqual({ text: peer.runningConfig, format: 'cli', via: 'ssh' });
      expect(a.text).not.toMatch(/\r|\x1b|Time:|Building configuration|ossh-sw1#/);
      expect(createHash('sha256').update(b.text).digest('hex')).toBe(createHash('sha256').update(a.text).digest('hex'));
    } catch (e) {
      throw new Error(`${(e as Error).message}\n--- transcript ---\n${transcript.join('\n')}\n--- sshd ---\n${peer.logs()}`);
    } finally {
      await s.close();
    }
    expect(transcript.join('\n')).toMatch(/prompt 'ossh-sw1#'/);
  });

  it('runs a show command and surfaces an error as a device error', async () => {
    const s = await sshCliDriver.open(target, LIMITS);
    try {
      const out = await s.run('show version');
      expect(out.split('\n')[0]).toBe('Generic network OS 1.0 (OpenSSH test device)');
      expect(out).not.toContain('ossh-sw1#');
      const e = await s.run('show bogus').then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(e).toBeInstanceOf(DriverError);
      expect((e as DriverError).kind).toBe('device');
      expect((e as DriverError).message).toMatch(/rejected 'show bogus': % Invalid input detected: show bogus/);
    } finally {
      await s.close();
    }
  });

  it("an unknown key is refused by sshd → 'auth'", async () => {
    const other = readableKeyPair();
    const e = await sshCliDriver.open({ ...target, credentials: { username: 'root', private_key: other.private } }, LIMITS).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(e).toBeInstanceOf(DriverError);
    expect((e as DriverError).kind).toBe('auth');
    expect((e as DriverError).message).toMatch(/authentication failed for user 'root' \(tried publickey\)/);
  });
  it("reports the host key as ssh-keygen fingerprints it, and refuses a wrong pinned key before authenticating → 'hostkey'", async () => {
    // What OpenSSH itself says the key is: ssh-keyscan piped into ssh-keygen -l.
    const scanned = execFileSync('/usr/bin/ssh-keyscan', ['-t', 'ed25519', '-p', String(peer.port), peer.host], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const listed = execFileSync('/usr/bin/ssh-keygen', ['-l', '-f', '-'], { input: scanned }).toString();
    const fingerprint = listed.split(' ')[1];
    expect(fingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);

    const learned = await sshCliDriver.open(target, LIMITS);
    await learned.close();
    expect(learned.hostKey).toEqual({ type: 'ssh-ed25519', fingerprint });

    const pinned = await sshCliDriver.open({ ...target, ssh_host_key: { type: 'ssh-ed25519', fingerprint } }, LIMITS);
    await pinned.close();

    const wrong = 'SHA256:' + 'A'.repeat(43);
    const transcript: string[] = [];
    const e = await sshCliDriver
      .open({ ...target, ssh_host_key: { type: 'ssh-ed25519', fingerprint: wrong } }, LIMITS, { write: (_d, t) => transcript.push(t) })
      .then(
        () => null,
        (err: unknown) => err,
      );
    expect(e).toBeInstanceOf(DriverError);
    expect((e as DriverError).kind).toBe('hostkey');
    expect((e as DriverError).message).toBe(
      `host key: mismatch for ossh-sw1 (${peer.host}:${peer.port}): expected ${wrong}, device offered ${fingerprint} (ssh-ed25519). ` +
        'If the device was replaced or re-keyed, clear the pinned key: DELETE /api/devices/:id/ssh-host-key',
    );
    expect(transcript.join('\n')).not.toMatch(/authenticated as/);
    // sshd's own account of that connection (the newest one): it ended before any user authentication.
    const lines = await until('sshd to log the refused connection', () => {
      const log = peer.logs().split('\n');
      const from = log
        .map((l) => /Connection from \S+ port (\d+)/.exec(l)?.[1])
        .filter(Boolean)
        .pop();
      const mine = from ? log.filter((l) => l.includes(`port ${from}`)) : [];
      return mine.some((l) => /preauth|closed|reset/i.test(l) && !/Connection from/.test(l)) ? mine : null;
    });
    expect(lines.join('\n')).not.toMatch(/Accepted|Failed|publickey|Postponed|Authenticat/i);
  });
});
