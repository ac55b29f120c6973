/**
 * NETCONF-over-SSH client session (RFC 6241 / RFC 6242): TCP with keepalive, SSH auth, the
 * "netconf" subsystem, hello exchange, framing selection and message-id correlation.
 * Any failure is raised as a DriverError whose kind tells the operator what went wrong.
 */
import net from 'node:net';
import ssh2, { type Client, type ClientChannel, type ConnectConfig } from 'ssh2';
import { hostKeyCheck } from '../ssh/host-key';
import { DriverError, type SessionLimits, type SshHostKey, type Transcript } from '../types';
import { FrameDecoder, FramingError, encodeMessage, type Framing } from './framing';
import { XmlError, child, childrenNamed, elements, isElement, localName, parseXml, serializeXml, textOf, type XElement } from './xml';

export const NS_BASE = 'urn:ietf:params:xml:ns:netconf:base:1.0';
export const CAP = {
  base10: 'urn:ietf:params:netconf:base:1.0',
  base11: 'urn:ietf:params:netconf:base:1.1',
  candidate: 'urn:ietf:params:netconf:capability:candidate:1.0',
  confirmedCommit10: 'urn:ietf:params:netconf:capability:confirmed-commit:1.0',
  confirmedCommit11: 'urn:ietf:params:netconf:capability:confirmed-commit:1.1',
  writableRunning: 'urn:ietf:params:netconf:capability:writable-running:1.0',
  rollbackOnError: 'urn:ietf:params:netconf:capability:rollback-on-error:1.0',
} as const;

export interface NetconfConnectOptions {
  host: string;
  port: number;
  username: string;
  password?: string;
  privateKey?: string;
  limits: SessionLimits;
  transcript?: Transcript;
  /** Strings masked out of the transcript. */
  secrets?: string[];
  /** Offer base:1.1 (default true). */
  offerBase11?: boolean;
  /** The device's name, for the host key mismatch message (default the host). */
  name?: string;
  /** The pinned host key: any other fails the handshake before authentication. */
  pinnedHostKey?: SshHostKey | null;
  /** Largest message taken from the device (default DEFAULT_MAX_ANSWER_BYTES). */
  maxMessageBytes?: number;
}

export interface RpcErrorDetail {
  type: string;
  tag: string;
  severity: string;
  appTag: string;
  path: string;
  message: string;
  info: string;
}

interface Pending {
  id: string;
  label: string;
  resolve: (reply: XElement) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

/** Parse the <rpc-error> elements of a reply. */
export function rpcErrors(reply: XElement): RpcErrorDetail[] {
  return childrenNamed(reply, 'rpc-error').map((e) => {
    const info = child(e, 'error-info');
    return {
      type: textOf(child(e, 'error-type')).trim(),
      tag: textOf(child(e, 'error-tag')).trim(),
      severity: textOf(child(e, 'error-severity')).trim() || 'error',
      appTag: textOf(child(e, 'error-app-tag')).trim(),
      path: textOf(child(e, 'error-path')).trim(),
      message: textOf(child(e, 'error-message')).trim(),
      info: info ? serializeXml(elements(info.children), null) : '',
    };
  });
}

/** One line per error, in words an operator can act on. */
export function describeRpcError(e: RpcErrorDetail): string {
  let s = e.tag || 'error';
  const qual = [e.type, e.severity].filter(Boolean).join(', ');
  if (qual) s += ` (${qual})`;
  if (e.path) s += ` at ${e.path}`;
  if (e.message) s += `: ${e.message}`;
  if (e.appTag) s += ` [app-tag ${e.appTag}]`;
  if (e.info) s += ` [info ${e.info}]`;
  return s;
}

/** Replace every occurrence of each non-empty secret with ******. */
export function maskSecrets(text: string, secrets: string[]): string {
  let out = text;
  for (const s of secrets) if (s) out = out.split(s).join('******');
  return out;
}

/**
 * yuma123 (Debian's netconfd) leaves a message that reached it in one read with the client's
 * <hello> unanswered until more input arrives; on a busy server our hello and first rpc do arrive
 * together. Servers of the yuma family (OpenYuma shares that code) advertise yuma-mysession, whose
 * <get-my-session> is the cheap, read-only rpc we send as that extra input when the first reply is late.
 */
export const YUMA_MYSESSION = 'http://netconfcentral.org/ns/yuma-mysession';
const FIRST_REPLY_NUDGE_MS = 500;

function capBase(uri: string): string {
  const q = uri.indexOf('?');
  return (q < 0 ? uri : uri.slice(0, q)).trim();
}

export class NetconfClient {
  private readonly decoder: FrameDecoder;
  private pending = new Map<string, Pending>();
  private nextId = 101;
  private failure: DriverError | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private closing = false;
  private helloWaiter: ((hello: XElement) => void) | undefined;
  private nudgeFirstReply = false;
  serverCapabilities: string[] = [];
  sessionId = '';
  /** The SSH host key the device offered. */
  hostKey: SshHostKey | undefined;

  private constructor(
    private readonly ssh: Client,
    private readonly stream: ClientChannel,
    private readonly opts: NetconfConnectOptions,
  ) {
    this.decoder = new FrameDecoder('eom', opts.maxMessageBytes);
  }

  get where(): string {
    return `${this.opts.host}:${this.opts.port}`;
  }

  get framing(): Framing {
    return this.decoder.mode;
  }

  get broken(): boolean {
    return this.failure !== undefined || this.closed;
  }

  has(capability: string): boolean {
    const want = capBase(capability);
    return this.serverCapabilities.some((c) => capBase(c) === want);
  }

  static async connect(opts: NetconfConnectOptions): Promise<NetconfClient> {
    const where = `${opts.host}:${opts.port}`;
    const deadline = Date.now() + opts.limits.connectTimeoutMs;
    const left = (): number => Math.max(1, deadline - Date.now());
    const transcript = opts.transcript;
    transcript?.write('info', `connecting to ${where} (netconf over ssh) as ${opts.username}`);

    const sock = await tcpConnect(opts.host, opts.port, left(), opts.limits.keepaliveIntervalMs);
    const ssh = new ssh2.Client();
    // Errors are handled by the listeners of each phase; this one only keeps a late error from
    // becoming an uncaught exception between phases.
    ssh.on('error', () => undefined);
    try {
      const hostKey = await sshHandshake(ssh, sock, opts, left());
      const stream = await withTimeout(
        new Promise<ClientChannel>((resolve, reject) => {
          ssh.subsys('netconf', (err, ch) =>
            err ? reject(new DriverError('refused', `${where} refused the "netconf" SSH subsystem: ${err.message}`)) : resolve(ch),
          );
        }),
        left(),
        () => new DriverError('timeout', `opening the netconf subsystem on ${where} timed out after ${opts.limits.connectTimeoutMs}ms`),
      );
      const client = new NetconfClient(ssh, stream, opts);
      client.hostKey = hostKey;
      await client.helloExchange(left());
      transcript?.write('info', `netconf session ${client.sessionId} on ${where}, framing ${client.framing}`);
      return client;
    } catch (err) {
      ssh.end();
      sock.destroy();
      throw err;
    }
  }

  private async helloExchange(timeoutMs: number): Promise<void> {
    const offer11 = this.opts.offerBase11 !== false;
    const caps = [CAP.base10, ...(offer11 ? [CAP.base11] : [])];
    const hello = `<?xml version="1.0" encoding="UTF-8"?><hello xmlns="${NS_BASE}"><capabilities>${caps
      .map((c) => `<capability>${c}</capability>`)
      .join('')}</capabilities></hello>`;
    const got = new Promise<XElement>((resolve) => (this.helloWaiter = resolve));
    this.attach();
    this.send(hello, 'eom');
    const serverHello = await withTimeout(
      Promise.race([got, this.failedPromise()]),
      timeoutMs,
      () => new DriverError('timeout', `no NETCONF <hello> from ${this.where} within ${this.opts.limits.connectTimeoutMs}ms`),
    ).catch((err) => {
      this.destroy();
      throw err;
    });
    const capsEl = child(serverHello, 'capabilities');
    this.serverCapabilities = capsEl ? childrenNamed(capsEl, 'capability').map((c) => textOf(c).trim()) : [];
    this.sessionId = textOf(child(serverHello, 'session-id')).trim();
    const s10 = this.has(CAP.base10);
    const s11 = this.has(CAP.base11);
    if (!s10 && !s11) {
      this.destroy();
      throw new DriverError(
        'protocol',
        `${this.where} hello advertises neither base:1.0 nor base:1.1 (capabilities: ${this.serverCapabilities.join(' ') || 'none'})`,
      );
    }
    if (!s10 && !offer11) {
      this.destroy();
      throw new DriverError('protocol', `${this.where} supports only base:1.1 but the client did not offer it`);
    }
    this.decoder.setFraming(s11 && offer11 ? 'chunked' : 'eom');
    this.nudgeFirstReply = this.has(YUMA_MYSESSION);
    // Bytes that followed the hello in the same read are decoded with the new framing.
    this.drain();
  }

  private failurePromise: Promise<never> | undefined;
  private failReject: ((e: Error) => void) | undefined;
  private failedPromise(): Promise<never> {
    if (!this.failurePromise) {
      this.failurePromise = new Promise<never>((_, reject) => (this.failReject = reject));
      this.failurePromise.catch(() => undefined);
      if (this.failure) this.failReject?.(this.failure);
    }
    return this.failurePromise;
  }

  private attach(): void {
    this.stream.on('data', (data: Buffer) => this.onData(data));
    this.stream.stderr.on('data', (data: Buffer) => this.opts.transcript?.write('info', `stderr: ${data.toString('utf8')}`));
    this.stream.on('close', () => this.fail(new DriverError('protocol', `${this.where} closed the NETCONF session`)));
    this.stream.on('error', (err: Error) => this.fail(new DriverError('protocol', `NETCONF channel to ${this.where} failed: ${err.message}`)));
    this.ssh.on('error', (err: Error & { level?: string }) => {
      const kind = err.level === 'client-timeout' ? 'timeout' : 'protocol';
      this.fail(new DriverError(kind, `SSH connection to ${this.where} failed: ${err.message}`));
    });
    this.ssh.on('close', () => this.fail(new DriverError('protocol', `SSH connection to ${this.where} closed`)));
  }

  private onData(data: Buffer): void {
    if (this.failure) return;
    this.decoder.push(data);
    this.drain();
    this.armIdle();
  }

  private drain(): void {
    try {
      for (let msg = this.decoder.next(); msg !== undefined; msg = this.decoder.next()) {
        this.onMessage(msg);
        if (this.failure) return;
      }
    } catch (err) {
      // This runs in the channel's 'data' handler: a throw from here would end the process.
      const why = err instanceof FramingError ? err.message : `could not handle its message: ${String(err)}`;
      this.fail(new DriverError('protocol', `${this.where}: ${why}`));
    }
  }

  private armIdle(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    if (this.failure || this.pending.size === 0 || this.decoder.pendingBytes === 0) return;
    const ms = this.opts.limits.idleTimeoutMs;
    this.idleTimer = setTimeout(() => {
      const labels = [...this.pending.values()].map((p) => p.label).join(', ');
      this.fail(new DriverError('timeout', `reply to ${labels} from ${this.where} stalled: no data for ${ms}ms mid-message`));
    }, ms);
  }

  private onMessage(text: string): void {
    this.opts.transcript?.write('received', maskSecrets(text, this.opts.secrets ?? []));
    let root: XElement | undefined;
    try {
      root = parseXml(text).find(isElement);
    } catch (err) {
      const why = err instanceof XmlError ? err.message : String(err);
      this.fail(new DriverError('protocol', `${this.where} sent a message that is not well-formed XML: ${why}`));
      return;
    }
    if (!root) {
      this.fail(new DriverError('protocol', `${this.where} sent an empty NETCONF message`));
      return;
    }
    const kind = localName(root.name);
    if (this.helloWaiter) {
      if (kind !== 'hello') {
        this.fail(new DriverError('protocol', `${this.where} sent <${kind}> where a NETCONF <hello> was expected`));
        return;
      }
      const w = this.helloWaiter;
      this.helloWaiter = undefined;
      w(root);
      return;
    }
    if (kind !== 'rpc-reply') {
      this.opts.transcript?.write('info', `ignoring unsolicited <${kind}>`);
      return;
    }
    let id = root.attrs['message-id'] ?? Object.entries(root.attrs).find(([k]) => localName(k) === 'message-id')?.[1];
    if (id === undefined && this.pending.size === 1) id = [...this.pending.keys()][0];
    const p = id === undefined ? undefined : this.pending.get(id);
    if (!p) {
      this.opts.transcript?.write('info', `ignoring rpc-reply with unknown message-id ${id ?? '(none)'}`);
      return;
    }
    this.pending.delete(p.id);
    clearTimeout(p.timer);
    const errors = rpcErrors(root).filter((e) => e.severity !== 'warning');
    if (errors.length > 0) {
      p.reject(new DriverError('device', `${p.label} on ${this.where} failed: ${errors.map(describeRpcError).join('; ')}`));
    } else {
      p.resolve(root);
    }
  }

  private send(xml: string, framing: Framing = this.decoder.mode): void {
    this.opts.transcript?.write('sent', maskSecrets(xml, this.opts.secrets ?? []));
    this.stream.write(encodeMessage(xml, framing));
  }

  /**
   * Send one <rpc> whose body is `operationXml` and wait for its reply. Resolves with the
   * <rpc-reply> element; an <rpc-error> of severity error rejects with kind 'device'. A command
   * timeout ends the session (its state is unknown afterwards; the server then releases locks
   * and reverts an unconfirmed commit).
   */
  /** An rpc the device may work on for minutes without a byte (an edit of a large datastore, a commit): SessionLimits.commitTimeoutMs. */
  slowRpc(operationXml: string, label: string): Promise<XElement> {
    const { commitTimeoutMs, commandTimeoutMs } = this.opts.limits;
    return this.rpc(operationXml, label, Math.max(commitTimeoutMs, commandTimeoutMs));
  }

  rpc(operationXml: string, label: string, timeoutMs = this.opts.limits.commandTimeoutMs): Promise<XElement> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closed) return Promise.reject(new DriverError('protocol', `NETCONF session to ${this.where} is closed`));
    const id = String(this.nextId++);
    return new Promise<XElement>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        const err = new DriverError('timeout', `${label} on ${this.where} timed out after ${timeoutMs}ms without a reply`);
        reject(err);
        this.fail(err);
      }, timeoutMs);
      this.pending.set(id, { id, label, resolve, reject, timer });
      if (this.nudgeFirstReply) this.nudgeIfLate(id);
      this.send(`<?xml version="1.0" encoding="UTF-8"?><rpc xmlns="${NS_BASE}" message-id="${id}">${operationXml}</rpc>`);
    });
  }

  /** Send <get-my-session> if the session's first rpc (`id`) is still unanswered shortly (see YUMA_MYSESSION). */
  private nudgeIfLate(id: string): void {
    this.nudgeFirstReply = false;
    setTimeout(() => {
      if (!this.pending.has(id) || this.closing) return;
      this.opts.transcript?.write('info', `no reply yet to the first rpc: sending <get-my-session> so ${this.where} reads on`);
      this.rpc(`<get-my-session xmlns="${YUMA_MYSESSION}"/>`, 'get-my-session').catch(() => undefined);
    }, FIRST_REPLY_NUDGE_MS).unref();
  }

  private fail(err: DriverError): void {
    if (this.failure || this.closed) return;
    this.failure = err;
    clearTimeout(this.idleTimer);
    if (!this.closing) this.opts.transcript?.write('info', err.message);
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(err);
    }
    this.pending.clear();
    this.failReject?.(err);
    this.destroy();
  }

  private destroy(): void {
    this.stream.destroy();
    this.ssh.end();
  }

  /** Drop the connection at once, without <close-session> (what a lost session looks like). */
  abort(): void {
    this.closing = true;
    this.fail(new DriverError('protocol', `NETCONF session to ${this.where} aborted`));
  }

  /** Polite close: <close-session> (short wait), then tear down SSH. Never throws. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closing = true;
    if (!this.failure) {
      const t = Math.min(this.opts.limits.commandTimeoutMs, 2000);
      await this.rpc('<close-session/>', 'close-session', t).catch(() => undefined);
    }
    this.closed = true;
    clearTimeout(this.idleTimer);
    for (const p of this.pending.values()) clearTimeout(p.timer);
    this.pending.clear();
    this.destroy();
  }
}

function withTimeout<T>(p: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(onTimeout()), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}

/** TCP connect with its own timeout and TCP keepalive; errors mapped to DriverError kinds. */
export function tcpConnect(host: string, port: number, timeoutMs: number, keepaliveMs: number): Promise<net.Socket> {
  const where = `${host}:${port}`;
  return new Promise<net.Socket>((resolve, reject) => {
    const sock = net.connect({ host, port });
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new DriverError('timeout', `TCP connect to ${where} timed out after ${timeoutMs}ms`));
    }, timeoutMs);
    sock.once('connect', () => {
      clearTimeout(timer);
      sock.removeAllListeners('error');
      sock.setKeepAlive(true, keepaliveMs);
      sock.setNoDelay(true);
      resolve(sock);
    });
    sock.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      const code = err.code ?? '';
      const kind = code === 'ETIMEDOUT' ? 'timeout' : 'refused';
      reject(new DriverError(kind, `TCP connect to ${where} failed: ${code || err.message}`));
    });
  });
}

/** Resolves with the host key the device offered once authenticated. */
function sshHandshake(ssh: Client, sock: net.Socket, opts: NetconfConnectOptions, timeoutMs: number): Promise<SshHostKey | undefined> {
  const where = `${opts.host}:${opts.port}`;
  const hostKey = hostKeyCheck({ name: opts.name ?? opts.host, host: opts.host, ssh_host_key: opts.pinnedHostKey }, opts.port);
  return new Promise<SshHostKey | undefined>((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new DriverError('timeout', `SSH handshake/authentication with ${where} timed out after ${opts.limits.connectTimeoutMs}ms`));
    }, timeoutMs);
    const onReady = (): void => {
      cleanup();
      resolve(hostKey.seen);
    };
    const onError = (err: Error & { level?: string }): void => {
      cleanup();
      if (hostKey.mismatch) {
        reject(hostKey.mismatch);
      } else if (err.level === 'client-authentication') {
        reject(new DriverError('auth', `SSH authentication as ${opts.username} to ${where} failed (${err.message})`));
      } else if (err.level === 'client-timeout') {
        reject(new DriverError('timeout', `SSH handshake with ${where} timed out: ${err.message}`));
      } else {
        reject(new DriverError('protocol', `SSH handshake with ${where} failed: ${err.message}`));
      }
    };
    const onClose = (): void => {
      cleanup();
      reject(hostKey.mismatch ?? new DriverError('protocol', `${where} closed the connection during the SSH handshake`));
    };
    const cleanup = (): void => {
      clearTimeout(timer);
      ssh.off('ready', onReady);
      ssh.off('error', onError);
      ssh.off('close', onClose);
    };
    ssh.on('ready', onReady);
    ssh.on('error', onError);
    ssh.on('close', onClose);
    ssh.on('keyboard-interactive', (_name, _instr, _lang, prompts, finish) => {
      finish(prompts.map(() => opts.password ?? ''));
    });
    const cfg: ConnectConfig = {
      sock,
      username: opts.username,
      readyTimeout: timeoutMs + 1000,
      keepaliveInterval: opts.limits.keepaliveIntervalMs,
      keepaliveCountMax: 3,
      tryKeyboard: opts.password !== undefined,
      // Runs during key exchange, before any credential is offered.
      hostVerifier: (key: Buffer) => {
        const ok = hostKey.verify(key);
        opts.transcript?.write('info', ok ? `host key ${hostKey.seen!.fingerprint} (${hostKey.seen!.type})` : hostKey.mismatch!.message);
        return ok;
      },
    };
    if (opts.password !== undefined) cfg.password = opts.password;
    if (opts.privateKey) cfg.privateKey = opts.privateKey;
    try {
      ssh.connect(cfg);
    } catch (err) {
      cleanup();
      reject(new DriverError('auth', `SSH setup for ${where} failed: ${(err as Error).message}`));
    }
  });
}
