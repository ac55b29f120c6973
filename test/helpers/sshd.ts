/**
 * Real OpenSSH sshds for tests. `startSshd` is the one start-up every harness shares: a temp dir
 * with its own sshd_config, ed25519 host key, pid file and log, a free loopback port (or a given
 * one), key-only login, spawned in the foreground and waited for until the port answers; close()
 * stops it and removes the dir. The harnesses add their own config lines:
 * - `startCaTrustingSshd` here: a plain login server trusting an SSH user CA (certificate checks);
 * - test/drivers/fixtures/ssh/openssh.ts: a device-like sshd with a ForceCommand CLI script;
 * - test/sim/netconf/netconfd.ts: netconfd's `netconf` subsystem.
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { freePort, listensOn, stopProcess, waitFor } from './net';

export const SSHD = '/usr/sbin/sshd';
export const SSH = '/usr/bin/ssh';
export const KEYGEN = '/usr/bin/ssh-keygen';

/** Throws, naming what is missing and the apt packages that bring it, unless every path exists. */
export function requireInstalled(what: string, paths: string[], packages: string[]): void {
  const missing = paths.filter((p) => !existsSync(p));
  if (missing.length > 0) throw new Error(`${what} needs ${missing.join(', ')}: install with "apt-get install -y ${packages.join(' ')}"`);
}

/** Throws unless the tests run as root (an sshd with its own config and a root login needs it). */
export function requireRoot(what: string): void {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    throw new Error(`${what} must run as root (sshd with its own config and a root login)`);
  }
}

/** Writes a passphrase-less ed25519 key pair at `file` and `file`.pub. */
export function keygen(file: string, comment?: string): void {
  execFileSync(KEYGEN, ['-q', '-t', 'ed25519', '-N', '', ...(comment ? ['-C', comment] : []), '-f', file]);
}

export interface SshdOptions {
  /** Prefix of the temp dir (config, keys, log). */
  tempPrefix: string;
  /** The port to listen on; default a free one. */
  port?: number;
  /** Makes a client key pair with this comment and lets it log in (authorized_keys); without it, `AuthorizedKeysFile none`. */
  clientKeyComment?: string;
  /** Runs in the temp dir before sshd starts (files the extra config lines name). */
  prepare?(dir: string): void;
  /** sshd_config lines after the common ones. */
  extraConfig?(dir: string): string[];
}

export interface Sshd {
  port: number;
  /** The temp dir, removed by close(). */
  dir: string;
  /** The client private key (OpenSSH format) when `clientKeyComment` was given. */
  clientKey: string | undefined;
  process: ChildProcess;
  /** The last 40 lines of sshd's log. */
  logs(): string;
  close(): Promise<void>;
}

/** Starts sshd and resolves once its port answers; on any failure cleans up and throws with its log. */
export async function startSshd(opts: SshdOptions): Promise<Sshd> {
  const dir = mkdtempSync(join(tmpdir(), opts.tempPrefix));
  const log = join(dir, 'sshd.log');
  const logs = () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').slice(-40).join('\n') : '(no sshd log)');
  let proc: ChildProcess | undefined;
  const close = async () => {
    if (proc) await stopProcess(proc);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    // sshd refuses to start without its privilege separation directory.
    mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
    keygen(join(dir, 'host_key'));
    let clientKey: string | undefined;
    if (opts.clientKeyComment !== undefined) {
      keygen(join(dir, 'client_key'), opts.clientKeyComment);
      writeFileSync(join(dir, 'authorized_keys'), readFileSync(join(dir, 'client_key.pub')), { mode: 0o600 });
      clientKey = readFileSync(join(dir, 'client_key'), 'utf8');
    }
    opts.prepare?.(dir);
    const port = opts.port ?? (await freePort());
    const config = [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${join(dir, 'host_key')}`,
      `PidFile ${join(dir, 'sshd.pid')}`,
      `AuthorizedKeysFile ${clientKey === undefined ? 'none' : join(dir, 'authorized_keys')}`,
      'StrictModes no',
      'UsePAM no',
      'PermitRootLogin prohibit-password',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'PubkeyAuthentication yes',
      'LogLevel VERBOSE',
      ...(opts.extraConfig?.(dir) ?? []),
      '',
    ];
    writeFileSync(join(dir, 'sshd_config'), config.join('\n'));
    const sshd = spawn(SSHD, ['-D', '-e', '-f', join(dir, 'sshd_config'), '-E', log], { stdio: 'ignore' });
    proc = sshd;
    await waitFor('sshd', () => listensOn(sshd.pid!, port), sshd, logs);
    return { port, dir, clientKey, process: sshd, logs, close };
  } catch (err) {
    await close();
    throw err;
  }
}

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

/**
 * sshd trusting `caPublicKey` (TrustedUserCAKeys); certificates with one of `principals` may log
 * in as the current user (AuthorizedPrincipalsFile). `ssh()` runs the OpenSSH client against it.
 * With `revokedKeysFile`, sshd refuses keys and certificates that file (a KRL) revokes.
 */
export async function startCaTrustingSshd(
  caPublicKey: string,
  principals: string[],
  options: { revokedKeysFile?: string } = {},
): Promise<CaTrustingSshd> {
  requireInstalled('SSH certificate tests', [SSHD, SSH, KEYGEN], ['openssh-server', 'openssh-client']);
  const account = userInfo().username;
  const sshd = await startSshd({
    tempPrefix: 'sb-sshd-',
    prepare(dir) {
      mkdirSync(join(dir, 'principals'));
      writeFileSync(join(dir, 'ca.pub'), `${caPublicKey.trim()}\n`);
      writeFileSync(join(dir, 'principals', account), `${principals.join('\n')}\n`, { mode: 0o644 });
    },
    extraConfig: (dir) => [
      `TrustedUserCAKeys ${join(dir, 'ca.pub')}`,
      `AuthorizedPrincipalsFile ${join(dir, 'principals')}/%u`,
      // sshd reads the file at every authentication, so a test can replace it while sshd runs.
      ...(options.revokedKeysFile ? [`RevokedKeys ${options.revokedKeysFile}`] : []),
    ],
  });
  const { port, dir } = sshd;

  return {
    port,
    account,
    newUserKey(name) {
      const privateKeyFile = join(dir, name);
      keygen(privateKeyFile, name);
      return { privateKeyFile, publicKey: readFileSync(`${privateKeyFile}.pub`, 'utf8').trim() };
    },
    saveCertificate(privateKeyFile, certificate) {
      const file = `${privateKeyFile}-cert.pub`;
      writeFileSync(file, `${certificate.trim()}\n`);
      return file;
    },
    ssh(privateKeyFile, certificateFile, command) {
      const args = [
        '-p',
        String(port),
        '-i',
        privateKeyFile,
        '-o',
        `CertificateFile=${certificateFile}`,
        '-o',
        'IdentitiesOnly=yes',
        '-o',
        'BatchMode=yes',
        '-o',
        'StrictHostKeyChecking=no',
        '-o',
        'UserKnownHostsFile=/dev/null',
        '-o',
        'ConnectTimeout=10',
        '-o',
        'LogLevel=ERROR',
        '-F',
        '/dev/null',
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
    logs: () => `--- sshd log ---\n${sshd.logs()}`,
    close: sshd.close,
  };
}
