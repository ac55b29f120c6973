/**
 * TCP connect, SSH handshake and login with ssh2, with every failure mapped to a DriverError
 * kind and a message naming the device and what went wrong.
 */
import { Socket } from 'node:net';
import ssh2 from 'ssh2';
import type { Algorithms, AnyAuthMethod, AuthenticationType, ClientChannel, Client as SshClient } from 'ssh2';
import { DriverError, type DeviceTarget, type SessionLimits, type SshHostKey } from '../types';
import { hostKeyCheck } from './host-key';

const { Client, utils } = ssh2;

/**
 * Older network gear still speaks only these. They are offered after every modern algorithm,
 * so they are used only when the device supports nothing better.
 */
export const LEGACY_ALGORITHMS: Algorithms = {
  kex: { append: ['diffie-hellman-group-exchange-sha1', 'diffie-hellman-group14-sha1', 'diffie-hellman-group1-sha1'] },
  serverHostKey: { append: ['ssh-dss'] },
  cipher: { append: ['aes128-cbc', 'aes192-cbc', 'aes256-cbc', '3des-cbc'] },
  hmac: { append: ['hmac-sha1-96', 'hmac-md5'] },
} as Algorithms;

/** Keepalives unanswered before the connection is declared dead. */
export const KEEPALIVE_COUNT_MAX = 3;

type SshError = Error & { level?: string; code?: string };

function authMethods(target: DeviceTarget): AnyAuthMethod[] {
  const { username, password, private_key } = target.credentials;
  const methods: AnyAuthMethod[] = [];
  if (private_key) {
    const parsed = utils.parseKey(private_key);
    if (parsed instanceof Error) {
      throw new DriverError('auth', `${target.name}: the private key in the connection profile cannot be used: ${parsed.message}`);
    }
    methods.push({ type: 'publickey', username, key: private_key });
  }
  if (password !== undefined) {
    methods.push({ type: 'password', username, password });
    methods.push({
      type: 'keyboard-interactive',
      username,
      prompt: (_name, _instructions, _lang, prompts, finish) => finish(prompts.map(() => password)),
    });
  }
  if (methods.length === 0) {
    throw new DriverError('auth', `${target.name}: the connection profile has neither a password nor a private key`);
  }
  return methods;
}

function mapError(err: SshError, where: string, target: DeviceTarget, limits: SessionLimits, tried: string[]): DriverError {
  const user = target.credentials.username;
  if (err.level === 'client-authentication') {
    return new DriverError('auth', `${where}: authentication failed for user '${user}' (tried ${tried.join(', ') || 'no method'})`);
  }
  if (err.level === 'client-timeout') {
    if (/keepalive/i.test(err.message)) return keepaliveError(where, limits);
    return new DriverError(
      'timeout',
      `${where}: connect timed out after ${limits.connectTimeoutMs} ms (TCP connect, SSH handshake and login; connect timeout)`,
    );
  }
  switch (err.code) {
    case 'ECONNREFUSED':
      return new DriverError('refused', `${where}: connection refused`);
    case 'ETIMEDOUT':
      return new DriverError('timeout', `${where}: TCP connect timed out (operating system limit)`);
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new DriverError('refused', `${where}: host unreachable (${err.code})`);
    case 'ECONNRESET':
    case 'EPIPE':
      return new DriverError('protocol', `${where}: connection reset by the device during the SSH handshake`);
    default:
      return new DriverError('protocol', `${where}: SSH protocol error: ${err.message}`);
  }
}

export function keepaliveError(where: string, limits: SessionLimits): DriverError {
  return new DriverError(
    'timeout',
    `${where}: no answer to ${KEEPALIVE_COUNT_MAX} keepalives sent every ${limits.keepaliveIntervalMs} ms (keepalive timeout)`,
  );
}

/**
 * Resolves with an authenticated client and the host key the device offered; rejects with a
 * DriverError ('hostkey' when the key is not the pinned one: no credential was sent).
 */
export function connectSsh(
  target: DeviceTarget,
  limits: SessionLimits,
  where: string,
  info: (text: string) => void,
  legacyAlgorithms = true,
): Promise<{ client: SshClient; hostKey: SshHostKey | undefined }> {
  const methods = authMethods(target);
  const tried: string[] = [];
  const hostKey = hostKeyCheck(target, target.ports.ssh);
  return new Promise((resolve, reject) => {
    const sock = new Socket();
    sock.setNoDelay(true);
    sock.setKeepAlive(true, limits.keepaliveIntervalMs);
    const client = new Client();
    let settled = false;
    const settle = (err?: DriverError) => {
      if (settled) return;
      settled = true;
      if (err) {
        client.removeAllListeners('ready');
        client.on('error', () => {}); // late errors after giving up are expected
        client.end();
        sock.destroy();
        reject(err);
      } else resolve({ client, hostKey: hostKey.seen });
    };
    client.on('banner', (text: string) => info(`pre-login banner: ${text.trim()}`));
    client.once('ready', () => {
      info(`authenticated as ${target.credentials.username} (${tried[tried.length - 1] ?? 'unknown method'})`);
      settle();
    });
    client.on('error', (e: SshError) => settle(hostKey.mismatch ?? mapError(e, where, target, limits, tried)));
    // Every client closes in the end: only one that closes before it is ready is an error.
    client.once(
      'close',
      () => settled || settle(hostKey.mismatch ?? new DriverError('protocol', `${where}: connection closed by the device during the SSH handshake`)),
    );
    let next = 0;
    client.connect({
      sock,
      username: target.credentials.username,
      readyTimeout: limits.connectTimeoutMs,
      keepaliveInterval: limits.keepaliveIntervalMs,
      keepaliveCountMax: KEEPALIVE_COUNT_MAX,
      ...(legacyAlgorithms ? { algorithms: LEGACY_ALGORITHMS } : {}),
      // Runs during key exchange, before authHandler offers any credential.
      hostVerifier: (key: Buffer) => {
        const ok = hostKey.verify(key);
        if (ok)
          info(
            `host key ${hostKey.seen!.fingerprint} (${hostKey.seen!.type})${target.ssh_host_key ? ' matches the pinned key' : ', none pinned yet'}`,
          );
        else info(hostKey.mismatch!.message);
        return ok;
      },
      authHandler: (methodsLeft, _partial, callback) => {
        while (next < methods.length) {
          const m = methods[next++];
          if (!methodsLeft || methodsLeft.includes(m.type)) {
            tried.push(m.type);
            callback(m);
            return;
          }
        }
        callback(false as unknown as AuthenticationType);
      },
    });
    sock.connect(target.ports.ssh, target.host);
  });
}

/** Opens an interactive shell with a wide pty. */
export function openShell(client: SshClient, where: string, timeoutMs: number): Promise<ClientChannel> {
  return new Promise<ClientChannel>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new DriverError('timeout', `${where}: the device did not open a shell within ${timeoutMs} ms (connect timeout)`)),
      timeoutMs,
    );
    client.shell({ term: 'vt100', cols: 511, rows: 24 }, (err, stream) => {
      clearTimeout(timer);
      if (err) reject(new DriverError('protocol', `${where}: the device refused an interactive shell: ${err.message}`));
      else resolve(stream);
    });
  });
}
