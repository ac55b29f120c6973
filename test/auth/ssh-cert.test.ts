import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SSH_CA_KEY_FILE, SSH_CA_PUBLIC_KEY_FILE, type SshCertificateAuthority, loadSshCa } from '../../controller/src/auth/ssh-ca';
import { ConfigError } from '../../controller/src/config';
import { ADMIN, startTestController, type TestController } from '../helpers/controller';
import { startCaTrustingSshd, type CaTrustingSshd } from '../helpers/sshd';

const KEYGEN = '/usr/bin/ssh-keygen';

let c: TestController;
let sshd: CaTrustingSshd;
let scratch: string;

function keygen(args: string[]): string {
  return execFileSync(KEYGEN, args, { env: { ...process.env, TZ: 'UTC' }, encoding: 'utf8' });
}

function newKey(name: string, type: string[] = ['-t', 'ed25519']): { file: string; publicKey: string } {
  const file = join(scratch, name);
  keygen(['-q', ...type, '-N', '', '-C', name, '-f', file]);
  return { file, publicKey: readFileSync(`${file}.pub`, 'utf8').trim() };
}

/** `ssh-keygen -L` of a certificate, as text and with its validity end parsed (UTC). */
function inspect(certificate: string): { text: string; validUntil: Date; validFrom: Date } {
  const file = join(scratch, `cert-${Date.now()}-${Math.random().toString(16).slice(2)}-cert.pub`);
  writeFileSync(file, `${certificate}\n`);
  const text = keygen(['-L', '-f', file]);
  const valid = /Valid: from (\S+) to (\S+)/.exec(text);
  if (!valid) throw new Error(`no validity in:\n${text}`);
  return { text, validFrom: new Date(`${valid[1]}Z`), validUntil: new Date(`${valid[2]}Z`) };
}

const fingerprint = (publicKeyLine: string) => {
  const file = join(scratch, `fp-${Math.random().toString(16).slice(2)}.pub`);
  writeFileSync(file, `${publicKeyLine}\n`);
  return keygen(['-l', '-f', file]).split(' ')[1];
};

const caPublicKey = () => readFileSync(join(c.config.dataDir, SSH_CA_PUBLIC_KEY_FILE), 'utf8').trim();

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'sb-sshcert-'));
  c = await startTestController({ settings: { 'security.rate_limit.requests_per_minute': 100000, 'security.rate_limit.failed_login_limit': 1000 } });
  sshd = await startCaTrustingSshd(caPublicKey(), [ADMIN.username]);
});
afterAll(async () => {
  await sshd?.close();
  await c?.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe('the SSH CA', () => {
  it('is generated into the data dir on first start, private key mode 0600, and survives a restart', async () => {
    const keyFile = join(c.config.dataDir, SSH_CA_KEY_FILE);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const pub = caPublicKey();
    expect(pub).toMatch(/^ssh-ed25519 \S+ switchboard-ssh-ca$/);
    // ssh-keygen reads the private key and derives the same public key.
    expect(keygen(['-y', '-f', keyFile]).trim().split(' ').slice(0, 2)).toEqual(pub.split(' ').slice(0, 2));
    await c.restart();
    expect(caPublicKey()).toBe(pub);
    expect((c.services.sshCa as SshCertificateAuthority).publicKey).toBe(pub);
  });

  it('uses the key file named by SWITCHBOARD_SSH_CA_KEY, and names the variable when it is unusable', () => {
    const supplied = newKey('supplied-ca');
    const ca = loadSshCa(join(scratch, 'unused-data-dir'), { SWITCHBOARD_SSH_CA_KEY: supplied.file });
    expect(ca.publicKey.split(' ')[1]).toBe(supplied.publicKey.split(' ')[1]);

    expect(() => loadSshCa(scratch, { SWITCHBOARD_SSH_CA_KEY: join(scratch, 'missing') })).toThrow(ConfigError);
    expect(() => loadSshCa(scratch, { SWITCHBOARD_SSH_CA_KEY: join(scratch, 'missing') })).toThrow(
      /SWITCHBOARD_SSH_CA_KEY names a file that cannot be read/,
    );
    writeFileSync(join(scratch, 'not-a-key'), 'hello\n');
    expect(() => loadSshCa(scratch, { SWITCHBOARD_SSH_CA_KEY: join(scratch, 'not-a-key') })).toThrow(
      /SWITCHBOARD_SSH_CA_KEY: .* is not an SSH private key/,
    );
    const locked = join(scratch, 'locked-ca');
    keygen(['-q', '-t', 'ed25519', '-N', 'a passphrase', '-f', locked]);
    expect(() => loadSshCa(scratch, { SWITCHBOARD_SSH_CA_KEY: locked })).toThrow(/passphrase-protected/);
  });
});

describe('ssh_certificate on POST /api/auth/login', () => {
  it(
    'is an OpenSSH user certificate for the key, principal = username, signed by the CA, valid 8 hours by default (shorter than the ' +
      'access token)',
    async () => {
      const key = newKey('admin-key');
      const res = await c.login(ADMIN.username, ADMIN.password, { public_key: key.publicKey });
      expect(res.status, res.text).toBe(200);
      expect(res.body.ssh_certificate).toMatch(/^ssh-ed25519-cert-v01@openssh\.com /);
      const cert = inspect(res.body.ssh_certificate);
      expect(cert.text).toContain('Type: ssh-ed25519-cert-v01@openssh.com user certificate');
      expect(cert.text).toMatch(new RegExp(`Principals: \\n\\s+${ADMIN.username}\\n\\s+Critical Options: \\(none\\)`));
      expect(cert.text).toContain(`Signing CA: ED25519 ${fingerprint(caPublicKey())}`);
      expect(cert.text).toContain(`Public key: ED25519-CERT ${fingerprint(key.publicKey)}`);
      expect(cert.text).toContain('permit-pty');
      const lifetime = (cert.validUntil.getTime() - Date.now()) / 1000;
      expect(res.body.expires_in).toBe(86400);
      expect(Math.abs(lifetime - 8 * 3600)).toBeLessThan(120);
      expect(cert.validFrom.getTime()).toBeLessThanOrEqual(Date.now());
      // The audit log ties the serial sshd logs to the user.
      const serial = /Serial: (\d+)/.exec(cert.text)?.[1];
      const audit = await c.request('GET', '/api/admin/audit?kind=auth.ssh_certificate_issued', { token: c.adminToken });
      expect(
        audit.body.entries.some(
          (e: { username: string; details: { serial: string } }) => e.username === ADMIN.username && e.details.serial === serial,
        ),
      ).toBe(true);
    },
  );

  it('caps the validity at ssh.certificate_max_hours (1 to 24 hours)', async () => {
    const set = (hours: unknown) =>
      c.request('PUT', '/api/admin/settings', { token: c.adminToken, body: { settings: { 'ssh.certificate_max_hours': hours } } });
    for (const bad of [0, 25, 1.5, '8']) {
      const res = await set(bad);
      expect(res.status, String(bad)).toBe(400);
      expect(res.body.code).toBe('INVALID_SETTING');
    }
    expect((await set(1)).status).toBe(200);
    try {
      const res = await c.login(ADMIN.username, ADMIN.password, { public_key: newKey('capped-key').publicKey });
      const lifetime = (inspect(res.body.ssh_certificate).validUntil.getTime() - Date.now()) / 1000;
      expect(Math.abs(lifetime - 3600)).toBeLessThan(120);
      expect(res.body.expires_in).toBe(86400); // the access token keeps its own lifetime
    } finally {
      await set(8);
    }
  });

  it('needs the ssh.certificate permission: 403 for an auditor with public_key and no session opened; without public_key the login works', async () => {
    const auditor = await c.createOrgUser(['auditor']);
    const sessions = async () => Number((await c.db('sessions').where({ user_id: auditor.userId }).count({ n: '*' }))[0].n);
    const before = await sessions();
    const res = await c.login(auditor.username, auditor.password, { public_key: newKey('auditor-key').publicKey });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('SSH_CERTIFICATE_NOT_PERMITTED');
    expect(res.body.error).toMatch(/ssh\.certificate permission: sign in without public_key/);
    expect(await sessions()).toBe(before);
    expect(await c.db('ssh_certificates').where({ user_id: auditor.userId })).toEqual([]);
    expect((await c.login(auditor.username, auditor.password)).status).toBe(200);
  });

  it("no certificate for a system account's name: such accounts cannot be made, and one made before is refused (403) without a session", async () => {
    // The audit finding: another organization's administrator creating `root`.
    const orgAdmin = await c.createOrgUser(['org_admin']);
    const password = 'a long enough password for root';
    const created = await c.request('POST', '/api/admin/users', { token: orgAdmin.token, body: { username: 'root', password, roles: ['operator'] } });
    expect(created.status).toBe(400);
    expect(created.body.code).toBe('RESERVED_USERNAME');

    // An account of that name made before names were checked (written straight to the database).
    const made = await c.request('POST', '/api/admin/users', {
      token: orgAdmin.token,
      body: { username: 'legacy-root', password, roles: ['operator'] },
    });
    expect(made.status, made.text).toBe(201);
    await c.db('users').where({ id: made.body.id }).update({ username: 'root' });
    const sessions = async () => Number((await c.db('sessions').where({ user_id: made.body.id }).count({ n: '*' }))[0].n);
    const res = await c.login('root', password, { public_key: newKey('root-key').publicKey });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('SSH_CERTIFICATE_NOT_PERMITTED');
    expect(res.body.error).toMatch(/^No SSH certificate for 'root': its principal would be the name of a system account/);
    expect(await sessions()).toBe(0);
    expect(await c.db('ssh_certificates').where({ user_id: made.body.id })).toEqual([]);
    // Without public_key the account still signs in.
    expect((await c.login('root', password)).status).toBe(200);
  });

  it('never outlives the access token (session.access_token_hours below the cap)', async () => {
    await c.request('PUT', '/api/admin/settings', { token: c.adminToken, body: { settings: { 'session.access_token_hours': 2 } } });
    try {
      const res = await c.login(ADMIN.username, ADMIN.password, { public_key: newKey('short-key').publicKey });
      expect(res.body.expires_in).toBe(7200);
      const lifetime = (inspect(res.body.ssh_certificate).validUntil.getTime() - Date.now()) / 1000;
      expect(Math.abs(lifetime - 7200)).toBeLessThan(120);
    } finally {
      await c.request('PUT', '/api/admin/settings', { token: c.adminToken, body: { settings: { 'session.access_token_hours': 24 } } });
    }
  });

  it('certifies RSA and ECDSA keys too', async () => {
    for (const [name, type, certType] of [
      ['rsa-key', ['-t', 'rsa', '-b', '2048'], 'ssh-rsa-cert-v01@openssh.com'],
      ['ecdsa-key', ['-t', 'ecdsa', '-b', '256'], 'ecdsa-sha2-nistp256-cert-v01@openssh.com'],
    ] as const) {
      const res = await c.login(ADMIN.username, ADMIN.password, { public_key: newKey(name, [...type]).publicKey });
      expect(res.status, res.text).toBe(200);
      expect(inspect(res.body.ssh_certificate).text).toContain(`Type: ${certType} user certificate`);
    }
  });

  it('a real sshd trusting the CA accepts a login with the certificate', async () => {
    const key = sshd.newUserKey('login-key');
    const res = await c.login(ADMIN.username, ADMIN.password, { public_key: key.publicKey });
    const certFile = sshd.saveCertificate(key.privateKeyFile, res.body.ssh_certificate);
    const run = await sshd.ssh(key.privateKeyFile, certFile, 'echo signed-in-with-cert');
    expect(run.code, `${run.stderr}\n${sshd.logs()}`).toBe(0);
    expect(run.stdout.trim()).toBe('signed-in-with-cert');
    expect(sshd.logs()).toMatch(/Accepted publickey .* ED25519-CERT .* ID switchboard:admin/);
  });

  it('sshd refuses the bare key, and a certificate whose principal is not allowed', async () => {
    const key = sshd.newUserKey('bare-key');
    const bare = await sshd.ssh(key.privateKeyFile, '/dev/null', 'echo no');
    expect(bare.code).toBe(255);

    const other = await c.createOrgUser(['operator']);
    const otherKey = sshd.newUserKey('other-key');
    const res = await c.login(other.username, other.password, { public_key: otherKey.publicKey });
    expect(inspect(res.body.ssh_certificate).text).toContain(other.username);
    const refused = await sshd.ssh(otherKey.privateKeyFile, sshd.saveCertificate(otherKey.privateKeyFile, res.body.ssh_certificate), 'echo no');
    expect(refused.code).toBe(255);
    expect(refused.stderr).toMatch(/Permission denied/);
  });

  it('a malformed public_key is a 400 before any session is created', async () => {
    const rsa1024 = newKey('weak-rsa', ['-t', 'rsa', '-b', '1024']).publicKey;
    const cases: [string, RegExp][] = [
      ['not a key', /not a valid OpenSSH public key/],
      ['ssh-ed25519 AAAA', /not a valid OpenSSH public key/],
      ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPXNcjZS2YjGX338PYolGPsLY6skmIHZSa7Y63HDf+CT\nssh-ed25519 AAAA', /one line/],
      [readFileSync(newKey('private-key').file, 'utf8'), /not a valid OpenSSH public key|one line/],
      [rsa1024, /1024 bits; at least 2048/],
      ['', /one line/],
    ];
    const sessions = async () => Number((await c.db('sessions').count({ n: '*' }))[0].n);
    const before = await sessions();
    for (const [publicKey, message] of cases) {
      const res = await c.login(ADMIN.username, ADMIN.password, { public_key: publicKey });
      expect(res.status, publicKey).toBe(400);
      expect(res.body.code).toBe('INVALID_SSH_PUBLIC_KEY');
      expect(res.body.error).toMatch(message);
    }
    expect(await sessions()).toBe(before);
  });

  it('without public_key there is no certificate', async () => {
    const res = await c.login(ADMIN.username, ADMIN.password);
    expect(res.status).toBe(200);
    expect(res.body).not.toHaveProperty('ssh_certificate');
  });
});

describe('the key revocation list, GET /api/auth/ssh/krl', () => {
  const PASSWORD = 'operator-password-for-ssh';
  let guarded: CaTrustingSshd;
  let krlFile: string;
  const names = { out: 'krl-logout', pw: 'krl-password', off: 'krl-disabled' };
  const ids: Record<string, string> = {};

  /** Fetches the KRL as a server's cron job would and installs it where sshd's RevokedKeys points. */
  async function publish(): Promise<Buffer> {
    const res = await fetch(`${c.url}/api/auth/ssh/krl`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    const krl = Buffer.from(await res.arrayBuffer());
    writeFileSync(krlFile, krl);
    return krl;
  }

  /** `ssh-keygen -Q`: true when the published KRL revokes the certificate. */
  function revokedByKrl(certificateFile: string): boolean {
    try {
      keygen(['-Q', '-f', krlFile, certificateFile]);
      return false;
    } catch (err) {
      if ((err as { status?: number }).status !== 1) throw err;
      expect(String((err as { stdout?: string }).stdout)).toMatch(/REVOKED/);
      return true;
    }
  }

  async function certified(username: string, keyName: string) {
    const key = guarded.newUserKey(keyName);
    const res = await c.login(username, PASSWORD, { public_key: key.publicKey });
    expect(res.status, res.text).toBe(200);
    return { key, token: res.body.access_token as string, certFile: guarded.saveCertificate(key.privateKeyFile, res.body.ssh_certificate) };
  }

  const signsIn = async (cert: { key: { privateKeyFile: string }; certFile: string }) =>
    (await guarded.ssh(cert.key.privateKeyFile, cert.certFile, 'echo in')).code === 0;

  beforeAll(async () => {
    for (const username of Object.values(names)) {
      const res = await c.request('POST', '/api/admin/users', { token: c.adminToken, body: { username, password: PASSWORD, roles: ['operator'] } });
      expect(res.status, res.text).toBe(201);
      ids[username] = res.body.id;
    }
    krlFile = join(scratch, 'revoked.krl');
    await publish();
    guarded = await startCaTrustingSshd(caPublicKey(), Object.values(names), { revokedKeysFile: krlFile });
  });
  afterAll(async () => guarded?.close());

  it('is an OpenSSH KRL for the CA that ssh-keygen reads; a live certificate is not on it and sshd lets it in', async () => {
    const krl = await publish();
    expect(krl.subarray(0, 8).toString('latin1')).toBe('SSHKRL\n\0');
    const live = await certified(names.out, 'krl-live');
    expect(revokedByKrl(live.certFile)).toBe(false);
    expect(await signsIn(live)).toBe(true);
  });

  it('logout revokes the certificate: sshd refuses it once the published KRL is installed', async () => {
    const cert = await certified(names.out, 'krl-out');
    await publish();
    expect(await signsIn(cert)).toBe(true);
    expect((await c.request('POST', '/api/auth/logout', { token: cert.token })).status).toBe(200);
    await publish();
    expect(revokedByKrl(cert.certFile)).toBe(true);
    const run = await guarded.ssh(cert.key.privateKeyFile, cert.certFile, 'echo in');
    expect(run.code).toBe(255);
    expect(guarded.logs()).toMatch(/revoked/i);
    // A new sign-in gets a new certificate, which is not on the list.
    const again = await certified(names.out, 'krl-out-again');
    await publish();
    expect(await signsIn(again)).toBe(true);
  });

  it("a password change revokes the other sessions' certificates and keeps the current one's", async () => {
    const other = await certified(names.pw, 'krl-pw-other');
    const current = await certified(names.pw, 'krl-pw-current');
    const changed = await c.request('PUT', '/api/auth/password', {
      token: current.token,
      body: { current_password: PASSWORD, new_password: `${PASSWORD}-2` },
    });
    expect(changed.status, changed.text).toBe(200);
    await publish();
    expect(revokedByKrl(other.certFile)).toBe(true);
    expect(await signsIn(other)).toBe(false);
    expect(revokedByKrl(current.certFile)).toBe(false);
    expect(await signsIn(current)).toBe(true);
  });

  it('disabling the user revokes their certificates', async () => {
    const cert = await certified(names.off, 'krl-off');
    expect((await c.request('PUT', `/api/admin/users/${ids[names.off]}`, { token: c.adminToken, body: { is_active: false } })).status).toBe(200);
    await publish();
    expect(revokedByKrl(cert.certFile)).toBe(true);
    expect(await signsIn(cert)).toBe(false);
  });

  it('drops a revoked certificate once it has expired (sshd refuses it by date anyway)', async () => {
    const before = (await publish()).length;
    const revoked = await c.db('ssh_certificates').whereNotNull('revoked_at').first('serial');
    await c
      .db('ssh_certificates')
      .where({ serial: revoked.serial })
      .update({ valid_until: c.db.raw("now() - interval '1 second'") });
    expect((await publish()).length).toBe(before - 8);
  });

  it('forgets certificates a day past their expiry at the next issue', async () => {
    const [old] = await c.db('ssh_certificates').whereNotNull('revoked_at').select('serial');
    await c
      .db('ssh_certificates')
      .where({ serial: old.serial })
      .update({ valid_until: c.db.raw("now() - interval '25 hours'") });
    await certified(names.out, 'krl-purge');
    expect(await c.db('ssh_certificates').where({ serial: old.serial })).toEqual([]);
    expect(Number((await c.db('ssh_certificates').count({ n: '*' }))[0].n)).toBeGreaterThan(0);
  });
});
