/**
 * A real NETCONF peer for tests: Debian's netconfd (yuma123) on its own unix socket and temp
 * home, reached through a real OpenSSH sshd on a free loopback port whose `netconf` subsystem
 * is yuma123's netconf-subsystem bridge. Login is root with a throwaway key.
 *
 * Failures throw with a message saying what is missing or what the daemon logged.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { canConnect, freePort, stopProcess, waitFor } from '../../helpers/net';

const NETCONFD = '/usr/sbin/netconfd';
const SUBSYSTEM = '/usr/sbin/netconf-subsystem';
const SSHD = '/usr/sbin/sshd';
const YUMA_MODULES = '/usr/share/yuma/modules';
const FIXTURES = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../drivers/fixtures/netconf');

export interface NetconfdPeer {
  host: string;
  port: number;
  username: string;
  privateKey: string;
  /** netconfd's and sshd's logs, for failure messages. */
  logs(): string;
  close(): Promise<void>;
}





/** Start netconfd + sshd. `modules` are YANG module names from test/drivers/fixtures/netconf. */
export async function startNetconfd(modules: string[] = ['sb-test']): Promise<NetconfdPeer> {
  const missing = [NETCONFD, SUBSYSTEM, SSHD, '/usr/bin/ssh-keygen'].filter((p) => !existsSync(p));
  if (missing.length > 0) {
    throw new Error(`netconfd integration test needs ${missing.join(', ')}: install with "apt-get install -y netconfd openssh-server"`);
  }
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    throw new Error('netconfd integration test must run as root (sshd with its own config and a root login)');
  }
  const dir = mkdtempSync(join(tmpdir(), 'sb-netconfd-'));
  const home = join(dir, 'home');
  mkdirSync(join(home, '.yuma'), { recursive: true });
  // sshd refuses to start without its privilege separation directory.
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const sock = join(dir, 'ncxserver.sock');
  const ncLog = join(dir, 'netconfd.log');
  const sshLog = join(dir, 'sshd.log');
  const logs = (): string => {
    const read = (f: string): string => (existsSync(f) ? readFileSync(f, 'utf8').split('\n').slice(-40).join('\n') : '(no log)');
    return `--- netconfd log ---\n${read(ncLog)}\n--- sshd log ---\n${read(sshLog)}`;
  };

  const port = await freePort();
  const netconfd = spawn(
    NETCONFD,
    [
      `--ncxserver-sockname=${sock}`,
      // netconfd only accepts sessions that the bridge reports as arriving on one of its ports.
      `--port=${port}`,
      '--no-startup',
      '--superuser=root',
      `--log=${ncLog}`,
      '--log-level=info',
      `--modpath=${FIXTURES}:${YUMA_MODULES}`,
      ...modules.map((m) => `--module=${m}`),
    ],
    { env: { ...process.env, HOME: home }, stdio: 'ignore' },
  );
  const procs: ChildProcess[] = [netconfd];
  const cleanup = async (): Promise<void> => {
    await Promise.all(procs.map(stopProcess));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor('netconfd', () => existsSync(sock), netconfd, logs);

    execFileSync('/usr/bin/ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'host_key')]);
    execFileSync('/usr/bin/ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'switchboard-test', '-f', join(dir, 'client_key')]);
    writeFileSync(join(dir, 'authorized_keys'), readFileSync(join(dir, 'client_key.pub')), { mode: 0o600 });
    const config = [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${join(dir, 'host_key')}`,
      `PidFile ${join(dir, 'sshd.pid')}`,
      `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
      'StrictModes no',
      'UsePAM no',
      'PermitRootLogin prohibit-password',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'PubkeyAuthentication yes',
      'LogLevel VERBOSE',
      // yuma123's bridge picks the ncxserver socket by the sshd port the client reached.
      `Subsystem netconf ${SUBSYSTEM} --ncxserver-sockname=${port}@${sock}`,
      '',
    ].join('\n');
    writeFileSync(join(dir, 'sshd_config'), config);
    const sshd = spawn(SSHD, ['-D', '-e', '-f', join(dir, 'sshd_config'), '-E', sshLog], { stdio: 'ignore' });
    procs.push(sshd);
    await waitFor('sshd', () => canConnect(port), sshd, logs);

    return {
      host: '127.0.0.1',
      port,
      username: 'root',
      privateKey: readFileSync(join(dir, 'client_key'), 'utf8'),
      logs,
      close: cleanup,
    };
  } catch (err) {
    await cleanup();
    throw err;
  }
}
