/**
 * Simulated SSH devices: one TCP listener per device on loopback, SSH served by ssh2 (sockets
 * are handed to an ssh2 Server with injectSocket, which lets slow-accept and transport garbage
 * happen before the SSH version line). All devices of a process share one host key.
 */
import { loopbackAddress } from '../loopback';
import { createServer, type Server as NetServer, type Socket } from 'node:net';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import ssh2 from 'ssh2';
import type { Algorithms, AuthContext, Connection, ParsedKey, ServerChannel } from 'ssh2';
import { CliShellSession, OutputWriter, type SimCommand, type SimCommandHandler, type SimDeviceState, type SshFaults } from './cli';
import { ConfirmedCommitTimer } from './confirmed-commit';
import { getPersona } from './personas';

const { Server, utils } = ssh2;

export type SshAuthMethod = 'password' | 'publickey' | 'keyboard-interactive';

export interface SshDeviceOptions {
  /** device_type of API.md; selects the persona (default vendor_ios). */
  dialect?: string;
  hostname?: string;
  username?: string;
  password?: string;
  /** More accounts (name → password), e.g. a second administrator of a shared PAN-OS candidate. */
  users?: Record<string, string>;
  /** Enable asks for this password; undefined = enable without a password. */
  enablePassword?: string;
  /** OpenSSH public key lines accepted for publickey auth. */
  authorizedKeys?: string[];
  /** Methods offered (default all three). */
  authMethods?: SshAuthMethod[];
  faults?: SshFaults;
  /** 0 (default) = a free port. */
  port?: number;
  host?: string;
  /** PEM/OpenSSH private host key; default: one ed25519 key per process. */
  hostKey?: string;
  /** Interfaces in the generated config (default 48, about 10–20 KiB of config). */
  configScale?: number;
  /** Lines per page before the pager stops (default 23). */
  pageLength?: number;
  /** The pager-off command is accepted but the pager stays on (some firmware does this). */
  ignorePagerOff?: boolean;
  /** SSH algorithms offered (ssh2 format), e.g. only legacy ones to imitate old firmware. */
  algorithms?: Algorithms;
  /**
   * How many ms one second of a confirmed commit's rollback timer lasts (default 1000, as on a
   * device): at 3, a Junos `commit confirmed 5` or an XR `commit confirmed 300` rolls back in about a second.
   */
  confirmedCommitScaleMs?: number;
}

export interface SimSshDevice {
  readonly host: string;
  readonly port: number;
  readonly hostname: string;
  readonly deviceType: string;
  close(): Promise<void>;
  /** Replace the running configuration (the part without volatile lines). */
  setConfig(text: string): void;
  /** The running configuration as a cleaned pull should return it. */
  config(): string;
  /** Add or replace a command on this device only. */
  addCommand(command: string, run: SimCommandHandler, opts?: { minMode?: 'user' | 'priv' }): void;
  /** Change fault modes at run time (affects new connections and new output). */
  setFaults(faults: SshFaults): void;
  /** Lines typed in config mode, in order. */
  readonly configLog: string[];
  /** Files copied to the device over SCP, by path (`flash:switchboard-restore.cfg`). */
  readonly files: Map<string, string>;
  /** Every open connection stops reading and answering, as if the link died (keepalives go unanswered). */
  freeze(): void;
  /** Whether a confirmed commit waits for its confirmation, and how many the device rolled back by itself. */
  readonly confirmedCommit: Pick<ConfirmedCommitTimer, 'pending' | 'rolledBack'>;
  readonly stats: { connections: number; logins: number };
}

let defaultHostKey: string | undefined;
/** The process-wide simulator host key (ed25519, generated once). */
/**
 * An ed25519 key pair ssh2 can read back. ssh2's generateKeyPairSync makes an unreadable OpenSSH
 * private key about once in 200 ("Malformed OpenSSH private key"), which would make any suite
 * that generates keys flaky; every test and simulator key comes from here.
 */
export function readableKeyPair(): { private: string; public: string } {
  for (;;) {
    const pair = utils.generateKeyPairSync('ed25519');
    if (!(utils.parseKey(pair.private) instanceof Error)) return pair;
  }
}

export function simHostKey(): string {
  defaultHostKey ??= readableKeyPair().private;
  return defaultHostKey;
}

/** Same text as the driver returns: no blank lines at either end, one final newline. */
export function normalizeConfig(text: string): string {
  const lines = text
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((l) => l.trimEnd());
  while (lines.length && lines[0] === '') lines.shift();
  while (lines.length && lines[lines.length - 1] === '') lines.pop();
  return lines.join('\n') + '\n';
}

function safeEqual(a: string, b: string | undefined): boolean {
  if (b === undefined) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function parsePublicKeys(lines: string[]): ParsedKey[] {
  return lines.map((l) => {
    const k = utils.parseKey(l);
    if (k instanceof Error) throw new Error(`ssh simulator: bad authorized key: ${k.message}`);
    return Array.isArray(k) ? k[0] : k;
  });
}

export async function startSshDevice(opts: SshDeviceOptions = {}): Promise<SimSshDevice> {
  const deviceType = opts.dialect ?? 'vendor_ios';
  const persona = getPersona(deviceType);
  const hostname = opts.hostname ?? 'sim-1';
  const username = opts.username ?? 'admin';
  const password = opts.password ?? 'admin';
  const accounts = new Map(Object.entries({ ...opts.users, [username]: password }));
  const methods: SshAuthMethod[] = opts.authMethods ?? ['password', 'publickey', 'keyboard-interactive'];
  const keys = parsePublicKeys(opts.authorizedKeys ?? []);
  const scale = opts.configScale ?? 48;
  let faults: SshFaults = { ...opts.faults };
  let body: string | undefined;
  let seq = 0;
  const stats = { connections: 0, logins: 0 };
  const base = Date.UTC(2024, 0, 1, 12, 0, 0);

  const state: SimDeviceState = {
    hostname,
    deviceType,
    persona,
    username,
    enablePassword: opts.enablePassword,
    get faults() {
      return faults;
    },
    ignorePagerOff: opts.ignorePagerOff ?? false,
    pageLength: opts.pageLength ?? 23,
    commands: new Map<string, SimCommand>(),
    configLog: [],
    files: new Map<string, string>(),
    confirmedCommit: new ConfirmedCommitTimer(opts.confirmedCommitScaleMs ?? 1000),
    getBody: () => normalizeConfig(currentBody()),
    setBody: (text: string) => {
      body = normalizeConfig(text);
      // The prompt follows the configured name, as on a real device.
      const named = /^hostname (\S+)$/m.exec(body) ?? /^\s*host-name (\S+);$/m.exec(body) ?? /^ {4}set hostname "([^"\s]+)"$/m.exec(body);
      if (named) state.hostname = named[1];
    },
    now: () => new Date(Math.max(Date.now(), base) + 1000 * ++seq),
    renderConfig() {
      const now = state.now();
      return persona.config.render(hostname, currentBody(), now, seq) + '\n';
    },
  };
  const currentBody = () => body ?? persona.config.body(hostname, scale);

  const sshServer = new Server({ hostKeys: [opts.hostKey ?? simHostKey()], ident: 'SSH-2.0-SwitchboardSim', algorithms: opts.algorithms }, (conn) =>
    serveConnection(conn),
  );
  const sockets = new Set<Socket>();

  function serveConnection(conn: Connection): void {
    // The account this connection logged in with.
    let user = username;
    conn.on('error', () => {});
    conn.on('authentication', (ctx: AuthContext) => {
      const others = methods.filter((m) => m !== ctx.method);
      const reject = () => ctx.reject(methods);
      const secret = accounts.get(ctx.username);
      if (faults.rejectAuth || secret === undefined || !methods.includes(ctx.method as SshAuthMethod)) return reject();
      user = ctx.username;
      switch (ctx.method) {
        case 'password':
          return safeEqual(ctx.password, secret) ? ctx.accept() : reject();
        case 'keyboard-interactive':
          return ctx.prompt([{ prompt: 'Password: ', echo: false }], 'Authentication', 'Enter your password', (answers) =>
            safeEqual(answers[0] ?? '', secret) ? ctx.accept() : reject(),
          );
        case 'publickey': {
          const key = keys.find((k) => k.getPublicSSH().equals(ctx.key.data));
          if (!key) return reject();
          if (ctx.signature && ctx.blob && key.verify(ctx.blob, ctx.signature, ctx.hashAlgo) !== true) return reject();
          return ctx.accept();
        }
        default:
          return others.length ? ctx.reject(methods) : reject();
      }
    });
    conn.on('ready', () => {
      stats.logins++;
      conn.on('session', (accept) => {
        const session = accept();
        let shell: CliShellSession | undefined;
        session.on('pty', (ok) => ok?.());
        session.on('window-change', (ok) => ok?.());
        session.on('env', (ok) => ok?.());
        session.on('shell', (ok) => {
          const stream = ok();
          stream.on('error', () => {});
          shell = startShell(conn, stream, user);
          stream.on('data', (d: Buffer) => shell?.input(d));
          stream.on('close', () => shell?.close());
        });
        session.on('exec', (ok, _reject, info) => {
          const stream = ok();
          stream.on('error', () => {});
          const scp = /^scp -t (\S+)$/.exec(info.command.trim());
          if (scp) return scpSink(stream, (text) => void (state.faults.loseUploads || state.files.set(scp[1], text)));
          const cli = new CliShellSession(state, new OutputWriter(stream), () => {}, user);
          stream.write(cli.runOnce(info.command).replace(/\r?\n/g, '\r\n'));
          stream.exit(0);
          stream.end();
        });
      });
    });
  }

  function startShell(conn: Connection, stream: ServerChannel, user: string): CliShellSession | undefined {
    if (faults.hang) return undefined;
    if (faults.garbage === 'shell') {
      const timer = setInterval(() => {
        if (!stream.writable) return clearInterval(timer);
        stream.write(noise(2048));
      }, 5);
      stream.on('close', () => clearInterval(timer));
      return undefined;
    }
    const out = new OutputWriter(stream, faults.slowOutput);
    const shell = new CliShellSession(
      state,
      out,
      (how) => {
        if (how === 'drop') conn.end();
        else {
          stream.exit(0);
          stream.end();
        }
      },
      user,
    );
    shell.start();
    return shell;
  }

  const listener: NetServer = createServer((sock) => {
    stats.connections++;
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
    sock.on('error', () => {});
    sock.setNoDelay(true);
    if (faults.garbage === 'transport') {
      sock.write('SSH-2.0-SwitchboardSim\r\n');
      sock.write(randomBytes(4096));
      return;
    }
    const hand = () => {
      if (!sock.destroyed) sshServer.injectSocket(sock);
    };
    if (faults.slowAcceptMs) setTimeout(hand, faults.slowAcceptMs).unref();
    else hand();
  });
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(opts.port ?? 0, host, () => {
      listener.off('error', reject);
      resolve();
    });
  });
  const port = (listener.address() as { port: number }).port;

  return {
    host,
    port,
    hostname,
    deviceType,
    stats,
    configLog: state.configLog,
    files: state.files,
    confirmedCommit: state.confirmedCommit,
    close: () =>
      new Promise<void>((resolve) => {
        // No rollback outlives the device.
        state.confirmedCommit.confirm();
        for (const s of sockets) s.destroy();
        listener.close(() => resolve());
      }),
    setConfig: (text) => state.setBody(text),
    config: () => normalizeConfig(currentBody()),
    addCommand: (command, run, o = {}) => {
      state.commands.set(command.trim().split(/\s+/).join(' '), { run, minMode: o.minMode });
    },
    setFaults: (f) => {
      faults = { ...f };
    },
    freeze: () => {
      for (const s of sockets) s.pause();
    },
  };
}

/**
 * The receiving end of `scp -t <file>` (one file): acknowledge, read `C<mode> <size> <name>`,
 * acknowledge, read size bytes and a 0, acknowledge, store.
 */
function scpSink(stream: ServerChannel, store: (text: string) => void): void {
  let buf = Buffer.alloc(0);
  let size = -1;
  stream.write(Buffer.from([0]));
  stream.on('data', (d: Buffer) => {
    buf = Buffer.concat([buf, d]);
    if (size < 0) {
      const nl = buf.indexOf(0x0a);
      if (nl < 0) return;
      const header = /^C[0-7]{4} (\d+) \S+$/.exec(buf.subarray(0, nl).toString('utf8'));
      if (!header) {
        stream.write('\x02scp: protocol error: expected a file\n');
        stream.exit(1);
        return stream.end();
      }
      size = Number(header[1]);
      buf = buf.subarray(nl + 1);
      stream.write(Buffer.from([0]));
    }
    if (buf.length < size + 1) return;
    store(buf.subarray(0, size).toString('utf8'));
    size = Number.MAX_SAFE_INTEGER;
    stream.write(Buffer.from([0]));
    stream.exit(0);
    stream.end();
  });
}

/** Random bytes mixed with ANSI escape sequences: what a broken line or a confused device sends. */
function noise(n: number): Buffer {
  const parts: Buffer[] = [];
  let size = 0;
  while (size < n) {
    const b = Math.random() < 0.3 ? Buffer.from(`\x1b[${Math.floor(Math.random() * 50)};${Math.floor(Math.random() * 50)}H`) : randomBytes(64);
    parts.push(b);
    size += b.length;
  }
  return Buffer.concat(parts);
}

export interface SshFleetOptions extends Omit<SshDeviceOptions, 'port' | 'hostname' | 'dialect'> {
  /** First port; device i listens on basePort + i. Default: free ports. */
  basePort?: number;
  /** Hostnames are `${prefix}-${i+1}` (default 'sim'). */
  hostnamePrefix?: string;
  /** device_types, cycled over the fleet (default ['vendor_ios']). */
  dialects?: string[];
  /**
   * Give device i its own loopback address (127.0.0.1, 127.0.0.2, …, Linux routes all of
   * 127/8 to lo) and the same port for all: basePort, or 22 when basePort is not set.
   */
  spreadHosts?: boolean;
}

export interface SimSshFleet {
  devices: SimSshDevice[];
  close(): Promise<void>;
}

/** Starts `n` devices sharing one host key; 1,000 start in well under a second. */
export async function startSshFleet(n: number, opts: SshFleetOptions = {}): Promise<SimSshFleet> {
  const { basePort, hostnamePrefix = 'sim', dialects = ['vendor_ios'], spreadHosts = false, ...common } = opts;
  const hostKey = common.hostKey ?? simHostKey();
  const devices: SimSshDevice[] = [];
  const BATCH = 200;
  try {
    for (let i = 0; i < n; i += BATCH) {
      const batch = [];
      for (let j = i; j < Math.min(n, i + BATCH); j++) {
        batch.push(
          startSshDevice({
            ...common,
            hostKey,
            dialect: dialects[j % dialects.length],
            hostname: `${hostnamePrefix}-${j + 1}`,
            host: spreadHosts ? loopbackAddress(j) : common.host,
            port: spreadHosts ? (basePort ?? 22) : basePort === undefined ? 0 : basePort + j,
          }),
        );
      }
      const settled = await Promise.allSettled(batch);
      for (const s of settled) if (s.status === 'fulfilled') devices.push(s.value);
      const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
      if (failed) throw failed.reason;
    }
  } catch (e) {
    await Promise.all(devices.map((d) => d.close()));
    throw e;
  }
  return { devices, close: async () => void (await Promise.all(devices.map((d) => d.close()))) };
}
