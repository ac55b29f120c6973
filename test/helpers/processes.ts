/**
 * Real processes for tests and benchmarks: nats-server (JetStream, own store, optional
 * monitoring port), controllers (`npm run controller`) and agents (`npm run agent`), each on
 * free loopback ports, with captured output, signals and a clean stop.
 *
 *   const nats = await startNats({ monitor: true });
 *   const c1 = await startControllerProcess({ databaseUrl, natsUrl: nats.url, secretKey });
 *   const agent = await startAgentProcess({ controllerUrl: c1.url, natsUrl: nats.url, enrollToken });
 *   ...
 *   await agent.stop(); await c1.stop(); await nats.close();
 *
 * Everything started here is stopped by `stopAll()` (call it in afterAll) even when a test fails.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, listensOn } from './net';

export const ROOT = join(import.meta.dirname, '../..');
export const NATS_SERVER = process.env.SWITCHBOARD_NATS_SERVER ?? '/usr/sbin/nats-server';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Proc {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Everything the process wrote (stdout and stderr), in order. */
  output(): string;
  /** Resolves with the exit code (or -1 when ended by a signal) once the process is gone. */
  readonly exited: Promise<number>;
  readonly running: boolean;
  signal(sig: NodeJS.Signals): void;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code. */
  stop(graceMs?: number): Promise<number>;
  /** Sends `sig` (default SIGKILL) unless it has exited; resolves with the exit code once it is gone. */
  kill(sig?: NodeJS.Signals): Promise<number>;
}

const live = new Set<Proc>();
const cleanups = new Set<() => void>();

/** Spawns a command with captured output; it is killed by stopAll() if still running. */
export function spawnProcess(
  command: string,
  args: string[],
  opts: { env?: Record<string, string | undefined>; cwd?: string; keepOutput?: number } = {},
): Proc {
  const child = spawn(command, args, {
    cwd: opts.cwd ?? ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...opts.env } as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const limit = opts.keepOutput ?? 2_000_000;
  let out = '';
  const take = (d: Buffer) => {
    out += String(d);
    if (out.length > limit) out = out.slice(out.length - limit);
  };
  child.stdout!.on('data', take);
  child.stderr!.on('data', take);
  let code: number | null = null;
  // 'exit' can come before the last of the output has been read: wait for the pipes to end too
  // (at most a second, as a child that left a daemon holding them would never end them).
  const drained = () =>
    Promise.race([
      Promise.all([child.stdout!, child.stderr!].map((s) => (s.readableEnded ? Promise.resolve() : new Promise((r) => s.once('close', r))))),
      new Promise((r) => setTimeout(r, 1_000).unref()),
    ]);
  const exited = new Promise<number>((resolve) => {
    child.once('exit', (c, sig) => {
      void drained().then(() => {
        code = c ?? (sig ? -1 : 0);
        live.delete(proc);
        resolve(code);
      });
    });
    child.once('error', (err) => {
      out += `\n[spawn error] ${err.message}\n`;
      code = -2;
      live.delete(proc);
      resolve(-2);
    });
  });
  const proc: Proc = {
    child,
    pid: child.pid ?? -1,
    output: () => out,
    exited,
    get running() {
      return code === null;
    },
    signal(sig) {
      if (code === null) child.kill(sig);
    },
    async stop(graceMs = 5_000) {
      if (code !== null) return code;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const c = await exited;
      clearTimeout(timer);
      return c;
    },
    async kill(sig = 'SIGKILL') {
      if (code !== null) return code;
      child.kill(sig);
      return exited;
    },
  };
  live.add(proc);
  return proc;
}

/** Runs a TypeScript entry point of this repository with tsx. */
export function spawnTs(entry: string, env: Record<string, string | undefined>, args: string[] = []): Proc {
  return spawnProcess(process.execPath, [...tsNodeFlags(), entry, ...args], { env });
}

/** Node's arguments before a TypeScript entry point of this repository, run with tsx. */
export function tsNodeFlags(): string[] {
  // SB_CPU_PROF_DIR=/tmp/prof: every spawned program writes a V8 CPU profile there when it exits (benchmark profiling).
  const profile = process.env.SB_CPU_PROF_DIR ? ['--cpu-prof', '--cpu-prof-dir', process.env.SB_CPU_PROF_DIR] : [];
  // SB_NODE_FLAGS='--trace-deopt …': Node and V8 flags for every spawned program (NODE_OPTIONS refuses most V8 flags).
  const flags = process.env.SB_NODE_FLAGS?.split(/\s+/).filter(Boolean) ?? [];
  return [...profile, ...flags, '--import', 'tsx'];
}

/** `npm run agent` as a real process, not waited for (LOG_LEVEL warn unless `env` says otherwise); startAgentProcess waits until it runs. */
export function spawnAgent(env: Record<string, string | undefined>): Proc {
  return spawnTs('agent/src/main.ts', { LOG_LEVEL: 'warn', ...env });
}

/** Polls until `check` holds; fails with the process output if it exits or time runs out. */
export async function waitUntil(what: string, check: () => boolean | Promise<boolean>, proc?: Proc, limitMs = 30_000): Promise<void> {
  const until = Date.now() + limitMs;
  while (Date.now() < until) {
    if (proc && !proc.running) throw new Error(`${what}: the process exited with ${await proc.exited}\n${proc.output().slice(-4000)}`);
    try {
      if (await check()) return;
    } catch {
      /* not yet */
    }
    await sleep(50);
  }
  throw new Error(`${what}: not ready after ${limitMs} ms${proc ? `\n${proc.output().slice(-4000)}` : ''}`);
}

// ---- nats-server ----------------------------------------------------------------------------

export interface NatsServer {
  url: string;
  port: number;
  /** http://127.0.0.1:PORT of the monitoring endpoint (/varz, /connz, /jsz) when asked for. */
  monitorUrl: string | null;
  proc(): Proc | null;
  /**
   * Starts it again on the same port and store (after stop or kill); `jetstream: false` starts it
   * without JetStream (a server whose JetStream API does not answer yet, as in a cluster electing leaders).
   */
  start(opts?: { jetstream?: boolean }): Promise<void>;
  stop(): Promise<void>;
  kill(): Promise<void>;
  /** /varz of the monitoring endpoint (in_msgs, out_msgs, connections, ...). */
  varz(): Promise<Record<string, any>>;
  close(): Promise<void>;
}

/** A private nats-server with JetStream on a free loopback port and its own store dir. */
export async function startNats(opts: { monitor?: boolean; config?: string; args?: string[] } = {}): Promise<NatsServer> {
  const storeDir = tempDir('sb-nats-');
  const port = await freePort();
  const monitorPort = opts.monitor ? await freePort() : null;
  const args = [
    '-a',
    '127.0.0.1',
    '-p',
    String(port),
    '-js',
    '-sd',
    storeDir,
    ...(monitorPort ? ['-m', String(monitorPort)] : []),
    ...(opts.config ? ['-c', opts.config] : []),
    ...(opts.args ?? []),
  ];
  const server = natsNode(port, monitorPort, args, storeDir);
  await server.start();
  return server;
}

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cleanups.add(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** One nats-server process that can be stopped, killed and started again on its port and store. */
function natsNode(port: number, monitorPort: number | null, args: string[], storeDir: string): NatsServer {
  let proc: Proc | null = null;
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    monitorUrl: monitorPort ? `http://127.0.0.1:${monitorPort}` : null,
    proc: () => proc,
    async start({ jetstream = true } = {}) {
      const started = spawnProcess(NATS_SERVER, jetstream ? args : args.filter((a, i) => a !== '-js' && a !== '-sd' && args[i - 1] !== '-sd'));
      proc = started;
      await waitUntil('nats-server', () => listensOn(started.pid, port), started, 15_000);
      if (monitorPort) await waitUntil('nats-server monitoring', () => listensOn(started.pid, monitorPort), started, 15_000);
    },
    async stop() {
      await proc?.stop(10_000);
      proc = null;
    },
    async kill() {
      await proc?.kill();
      proc = null;
    },
    async varz() {
      if (!monitorPort) throw new Error('startNats({ monitor: true }) for /varz');
      return (await fetch(`http://127.0.0.1:${monitorPort}/varz`)).json() as Promise<Record<string, any>>;
    },
    async close() {
      await proc?.kill();
      proc = null;
      rmSync(storeDir, { recursive: true, force: true });
    },
  };
}

export interface NatsClusterNode extends NatsServer {
  /** server_name (n1, n2, ...): what JetStream reports as a stream's leader or replica. */
  name: string;
  /** GET on the monitoring port (/jsz, /connz, ...). */
  monitor(path: string): Promise<Record<string, any>>;
}

export interface NatsCluster {
  /** Every node's client URL, comma-separated: what NATS_URL takes. */
  url: string;
  nodes: NatsClusterNode[];
  node(name: string): NatsClusterNode;
  /** Resolves once every running node sees the same JetStream meta leader. */
  ready(): Promise<void>;
  close(): Promise<void>;
}

/**
 * `size` nats-servers on loopback ports forming one cluster with JetStream clustered (each its
 * own store dir and monitoring port), as deploy/nats-cluster/ runs them. Nodes are killed and
 * started again one by one with `cluster.node('n2').kill()` / `.start()`.
 */
export async function startNatsCluster(size = 3): Promise<NatsCluster> {
  const ports = await Promise.all(
    Array.from({ length: size }, async () => ({ client: await freePort(), route: await freePort(), monitor: await freePort() })),
  );
  const routes = ports.map((p) => `nats-route://127.0.0.1:${p.route}`).join(', ');
  const nodes = ports.map((p, i): NatsClusterNode => {
    const name = `n${i + 1}`;
    const dir = tempDir(`sb-nats-${name}-`);
    const conf = join(dir, `${name}.conf`);
    writeFileSync(
      conf,
      [
        `server_name: ${name}`,
        `listen: 127.0.0.1:${p.client}`,
        `http: 127.0.0.1:${p.monitor}`,
        `jetstream { store_dir: "${join(dir, 'store')}" }`,
        `cluster { name: sb-test, listen: 127.0.0.1:${p.route}, routes: [${routes}] }`,
      ].join('\n'),
    );
    const node = natsNode(p.client, p.monitor, ['-c', conf], join(dir, 'store'));
    const monitor = async (path: string) => (await fetch(`${node.monitorUrl}${path}`)).json() as Promise<Record<string, any>>;
    return Object.assign(node, { name, monitor });
  });
  const cluster: NatsCluster = {
    url: nodes.map((n) => n.url).join(','),
    nodes,
    node: (name) =>
      nodes.find((n) => n.name === name) ??
      (() => {
        throw new Error(`no node ${name}`);
      })(),
    async ready() {
      await waitUntil(
        'the NATS cluster to elect a JetStream meta leader',
        async () => {
          const leaders = await Promise.all(nodes.filter((n) => n.proc()).map(async (n) => (await n.monitor('/jsz')).meta_cluster?.leader));
          return leaders.every((l) => l && l === leaders[0]);
        },
        undefined,
        60_000,
      );
    },
    async close() {
      await Promise.all(nodes.map((n) => n.close()));
    },
  };
  await Promise.all(nodes.map((n) => n.start()));
  await cluster.ready();
  return cluster;
}

// ---- controller -----------------------------------------------------------------------------

export interface ControllerProcessOptions {
  databaseUrl: string;
  natsUrl?: string | null;
  /** 32-byte key, hex; replicas of one installation must share it. Default: a fresh one. */
  secretKey?: string;
  adminPassword?: string;
  natsPrefix?: string;
  metricsToken?: string;
  dataDir?: string;
  logLevel?: string;
  /** Any other environment (SWITCHBOARD_JOB_SWEEP_MS, SWITCHBOARD_SHUTDOWN_TIMEOUT_SECONDS, ...). */
  env?: Record<string, string | undefined>;
  /** tsx entry point (default controller/src/main.ts; controller/src/start.ts for all-in-one). */
  entry?: string;
}

export interface ControllerProcess extends Proc {
  url: string;
  port: number;
  dataDir: string;
  secretKey: string;
  /** Restart on the same port, database and data dir (after stop or kill). */
  restart(): Promise<ControllerProcess>;
}

/** `npm run controller` as a real process on a free port; resolves once /healthz answers. */
export async function startControllerProcess(opts: ControllerProcessOptions): Promise<ControllerProcess> {
  const secretKey = opts.secretKey ?? randomBytes(32).toString('hex');
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'sb-ctl-'));
  if (!opts.dataDir) cleanups.add(() => rmSync(dataDir, { recursive: true, force: true }));
  const launch = async (port: number): Promise<ControllerProcess> => {
    const proc = spawnTs(opts.entry ?? 'controller/src/main.ts', {
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: opts.databaseUrl,
      NATS_URL: opts.natsUrl ?? undefined,
      SWITCHBOARD_DATA_DIR: dataDir,
      SWITCHBOARD_SECRET_KEY: secretKey,
      SWITCHBOARD_ADMIN_PASSWORD: opts.adminPassword ?? 'bootstrap-admin-password',
      SWITCHBOARD_NATS_PREFIX: opts.natsPrefix,
      SWITCHBOARD_METRICS_TOKEN: opts.metricsToken,
      SWITCHBOARD_PUBLIC_URL: `http://127.0.0.1:${port}`,
      LOG_LEVEL: opts.logLevel ?? 'warn',
      // The heap `npm run controller` gives the controller (package.json); npm start keeps the default.
      NODE_OPTIONS: opts.entry ? undefined : '--max-old-space-size=256',
      ...opts.env,
    });
    const url = `http://127.0.0.1:${port}`;
    // Its own answer: another test's server may have taken the port (then this one exits, EADDRINUSE).
    await waitUntil(`controller on ${url}`, async () => listensOn(proc.pid, port) && (await fetch(`${url}/healthz`)).ok, proc, 60_000);
    return Object.assign<Proc, Omit<ControllerProcess, keyof Proc>>(Object.create(proc) as Proc, {
      url,
      port,
      dataDir,
      secretKey,
      restart: async () => launch(port),
    });
  };
  return onFreePort(launch);
}

/**
 * Starts a program listening on a port picked free. Another test's server can take that port
 * before this one binds it (the program then exits: EADDRINUSE): another port is tried then.
 */
async function onFreePort<T>(launch: (port: number) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await launch(await freePort());
    } catch (err) {
      if (attempt >= 3 || !/EADDRINUSE|cannot listen/.test(String((err as Error).message))) throw err;
    }
  }
}

// ---- agent ----------------------------------------------------------------------------------

export interface AgentProcessOptions {
  natsUrl: string;
  /** Needed on first start (enrollment); restarts reuse the identity in stateDir. */
  controllerUrl?: string;
  enrollToken?: string;
  stateDir?: string;
  concurrency?: number;
  /** Serve /healthz, /readyz, /metrics on a free port (default true). */
  health?: boolean;
  metricsToken?: string;
  logLevel?: string;
  env?: Record<string, string | undefined>;
  /** How long it may take to come up (default 60 s; many at once on a small machine take longer). */
  readyTimeoutMs?: number;
}

export interface AgentProcess extends Proc {
  stateDir: string;
  /** http://127.0.0.1:PORT of the agent's ops server, when started with health. */
  healthUrl: string | null;
  restart(): Promise<AgentProcess>;
}

/** `npm run agent` as a real process; resolves once it runs (its /healthz answers, or its log says so). */
export async function startAgentProcess(opts: AgentProcessOptions): Promise<AgentProcess> {
  const stateDir = opts.stateDir ?? mkdtempSync(join(tmpdir(), 'sb-agent-'));
  if (!opts.stateDir) cleanups.add(() => rmSync(stateDir, { recursive: true, force: true }));
  const launch = async (healthPort: number | null): Promise<AgentProcess> => {
    const proc = spawnAgent({
      NATS_URL: opts.natsUrl,
      SWITCHBOARD_URL: opts.controllerUrl,
      SWITCHBOARD_ENROLL_TOKEN: opts.enrollToken,
      SWITCHBOARD_AGENT_STATE_DIR: stateDir,
      SWITCHBOARD_AGENT_CONCURRENCY: opts.concurrency ? String(opts.concurrency) : undefined,
      SWITCHBOARD_AGENT_HEALTH_PORT: healthPort === null ? undefined : String(healthPort),
      SWITCHBOARD_METRICS_TOKEN: opts.metricsToken,
      LOG_LEVEL: opts.logLevel ?? 'info',
      ...opts.env,
    });
    const healthUrl = healthPort === null ? null : `http://127.0.0.1:${healthPort}`;
    // Its ops server answers once the runtime runs; without one, its log says so (LOG_LEVEL info).
    await waitUntil(
      'agent running',
      async () =>
        healthPort !== null ? listensOn(proc.pid, healthPort) && (await fetch(`${healthUrl}/healthz`)).ok : proc.output().includes('agent running'),
      proc,
      opts.readyTimeoutMs ?? 60_000,
    );
    return Object.assign<Proc, Omit<AgentProcess, keyof Proc>>(Object.create(proc) as Proc, { stateDir, healthUrl, restart: start });
  };
  // A restart reads the identity the first start enrolled (stateDir), so a second try needs no token.
  const start = () => (opts.health === false ? launch(null) : onFreePort(launch));
  return start();
}

/** Kills every process this module started that is still running, and removes temp dirs. */
export async function stopAll(): Promise<void> {
  await Promise.all([...live].map((p) => p.kill()));
  for (const cleanup of cleanups) cleanup();
  cleanups.clear();
}
