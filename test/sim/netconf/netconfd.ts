/**
 * A real NETCONF peer for tests: Debian's netconfd (yuma123) on its own unix socket and temp
 * home, reached through a real OpenSSH sshd (test/helpers/sshd.ts) on a free loopback port whose
 * `netconf` subsystem is yuma123's netconf-subsystem bridge. Login is root with a throwaway key.
 *
 * Failures throw with a message saying what is missing or what the daemon logged.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, stopProcess, waitFor } from '../../helpers/net';
import { KEYGEN, SSHD, requireInstalled, requireRoot, startSshd, type Sshd } from '../../helpers/sshd';

const NETCONFD = '/usr/sbin/netconfd';
const SUBSYSTEM = '/usr/sbin/netconf-subsystem';
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
  requireInstalled('netconfd integration test', [NETCONFD, SUBSYSTEM, SSHD, KEYGEN], ['netconfd', 'openssh-server']);
  requireRoot('netconfd integration test');
  const dir = mkdtempSync(join(tmpdir(), 'sb-netconfd-'));
  const home = join(dir, 'home');
  mkdirSync(join(home, '.yuma'), { recursive: true });
  const sock = join(dir, 'ncxserver.sock');
  const ncLog = join(dir, 'netconfd.log');
  let sshd: Sshd | undefined;
  const logs = (): string => {
    const nc = existsSync(ncLog) ? readFileSync(ncLog, 'utf8').split('\n').slice(-40).join('\n') : '(no log)';
    return `--- netconfd log ---\n${nc}\n--- sshd log ---\n${sshd ? sshd.logs() : '(not started)'}`;
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
  const cleanup = async (): Promise<void> => {
    await Promise.all([stopProcess(netconfd), sshd?.close()]);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor('netconfd', () => existsSync(sock), netconfd, logs);
    sshd = await startSshd({
      tempPrefix: 'sb-netconfd-sshd-',
      port,
      clientKeyComment: 'switchboard-test',
      // yuma123's bridge picks the ncxserver socket by the sshd port the client reached.
      extraConfig: () => [`Subsystem netconf ${SUBSYSTEM} --ncxserver-sockname=${port}@${sock}`],
    });
    return {
      host: '127.0.0.1',
      port,
      username: 'root',
      privateKey: sshd.clientKey!,
      logs,
      close: cleanup,
    };
  } catch (err) {
    await cleanup();
    throw err;
  }
}
