/**
 * A real OpenSSH sshd that trusts an SSH user CA: its own sshd_config, host key and pid file in a
 * temp dir, on a free loopback port, public-key login only, TrustedUserCAKeys = the given CA key
 * and AuthorizedPrincipalsFile naming which certificate principals may log in as which account.
 * `ssh()` runs the OpenSSH client against it with a key and certificate.
 *
 * (test/sim/ssh and test/drivers/fixtures/ssh/openssh.ts start device-like sshds with a
 * ForceCommand; this one is a plain login server for certificate checks.)
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { canConnect, freePort, stopProcess, waitFor } from './net';

const SSHD = '/usr/sbin/sshd';
const SSH = '/usr/bin/ssh';
const KEYGEN = '/usr/bin/ssh-keygen';

export interface CaTrustingSshd {
  port: number;
  /** The local account certificates log in as (the user running the tests). */
  account: string;
  /** Writes an ed25519 key pair into the temp dir; returns its paths and public key line. */
  newUserKey(name: string): { privateKeyFile: string; publicKey: string };
  /** Saves a certificate next to a key (as ssh-keygen would: <key>-cert.pub); returns its path. */
  saveCertificate(privateKeyFile: string, certificate: string): string;
  /** Runs `ssh` with the key and certificate; resolves with exit code and output. */
  ssh(privateKeyFile: string, certificateFile: string, command: string): Promise<{ code: number; stdout: string; stderr: string }>;
  logs(): string;
  close(): Promise<void>;
}

/** sshd trusting `caPublicKey`; certificates with one of `principals` may log in as the current user. */
export async function startCaTrustingSshd(caPublicKey: string, principals: string[]): Promise<CaTrustingSshd> {
  const missing = [SSHD, SSH, KEYGEN].filter((p) => !existsSync(p));
  if (missing.length > 0) throw new Error(`SSH certificate tests need ${missing.join(', ')}: install with "apt-get install -y openssh-server openssh-client"`);
  const account = userInfo().username;
  const dir = mkdtempSync(join(tmpdir(), 'sb-sshd-'));
  // sshd refuses to start without its privilege separation directory.
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  mkdirSync(join(dir, 'principals'));
  writeFileSync(join(dir, 'ca.pub'), `${caPublicKey.trim()}\n`);
  writeFileSync(join(dir, 'principals', account), `${principals.join('\n')}\n`, { mode: 0o644 });
  execFileSync(KEYGEN, ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'host_key')]);
  const port = await freePort();
  const log = join(dir, 'sshd.log');
  writeFileSync(join(dir, 'sshd_config'), [
    `Port ${port}`,
    'ListenAddress 127.0.0.1',
    `HostKey ${join(dir, 'host_key')}`,
    `PidFile ${join(dir, 'sshd.pid')}`,
    `TrustedUserCAKeys ${join(dir, 'ca.pub')}`,
    `AuthorizedPrincipalsFile ${join(dir, 'principals')}/%u`,
    'AuthorizedKeysFile none',
    'StrictModes no',
    'UsePAM no',
    'PermitRootLogin prohibit-password',
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'PubkeyAuthentication yes',
    'LogLevel VERBOSE',
    '',
  ].join('\n'));
  const sshd = spawn(SSHD, ['-D', '-e', '-f', join(dir, 'sshd_config'), '-E', log], { stdio: 'ignore' });
  const logs = () => `--- sshd log ---\n${existsSync(log) ? readFileSync(log, 'utf8').split('\n').slice(-40).join('\n') : '(no log)'}`;
  const close = async () => {
    await stopProcess(sshd);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor('sshd', () => canConnect(port), sshd, logs);
  } catch (err) {
    await close();
    throw err;
  }

  return {
    port,
    account,
    newUserKey(name) {
      const privateKeyFile = join(dir, name);
      execFileSync(KEYGEN, ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', privateKeyFile]);
      return { privateKeyFile, publicKey: readFileSync(`${privateKeyFile}.pub`, 'utf8').trim() };
    },
    saveCertificate(privateKeyFile, certificate) {
      const file = `${privateKeyFile}-cert.pub`;
      writeFileSync(file, `${certificate.trim()}\n`);
      return file;
    },
    ssh(privateKeyFile, certificateFile, command) {
      const args = [
        '-p', String(port),
        '-i', privateKeyFile,
        '-o', `CertificateFile=${certificateFile}`,
        '-o', 'IdentitiesOnly=yes',
        '-o', 'BatchMode=yes',
        '-o', 'StrictHostKeyChecking=no',
        '-o', 'UserKnownHostsFile=/dev/null',
        '-o', 'ConnectTimeout=10',
        '-o', 'LogLevel=ERROR',
        '-F', '/dev/null',
        `${account}@127.0.0.1`,
        command,
      ];
      return new Promise((resolve) => {
        execFile(SSH, args, { timeout: 20_000 }, (err, stdout, stderr) => {
          const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 255) : 0;
          resolve({ code, stdout: String(stdout), stderr: String(stderr) });
        });
      });
    },
    logs,
    close,
  };
}
