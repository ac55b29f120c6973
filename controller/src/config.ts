import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { intFrom, urlFrom } from '../../shared/src/config/env';
import { trustProxyFrom, type TrustProxy } from './http/trust-proxy';

/** Controller settings read once from the environment at start. */
export interface ControllerConfig {
  port: number;
  host: string;
  databaseUrl: string | null;
  natsUrl: string | null;
  dataDir: string;
  adminUsername: string;
  adminPassword: string | null;
  /** 32-byte master key for secrets at rest and token signing. */
  secretKey: Buffer;
  logLevel: string;
  publicUrl: string;
  tls: boolean;
  /** SWITCHBOARD_TLS_CA_CERT / SWITCHBOARD_TLS_CA_KEY: PEM files of a CA to use instead of generating one. */
  tlsCa?: { certFile: string; keyFile: string } | null;
  /** SWITCHBOARD_METRICS_TOKEN: bearer token Prometheus sends to GET /metrics; unset = /metrics off. */
  metricsToken?: string | null;
  /** SWITCHBOARD_SHUTDOWN_TIMEOUT_SECONDS (25): on SIGTERM, the longest a clean stop may take before the process exits anyway. */
  shutdownTimeoutMs?: number;
  /** SWITCHBOARD_TRUST_PROXY (off): the proxies whose X-Forwarded-For gives the client address (http/trust-proxy.ts). */
  trustProxy?: TrustProxy;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** A missing or bad setting stops the process with one line naming the setting. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

function boolFrom(env: NodeJS.ProcessEnv, name: string): boolean {
  const raw = (env[name] ?? '').trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['', '0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be 1 or 0 (true or false), got "${env[name]}"`);
}

function readableFile(env: NodeJS.ProcessEnv, name: string): string {
  const path = resolve(env[name] as string);
  try {
    readFileSync(path);
  } catch (err) {
    throw new ConfigError(`${name} names a file that cannot be read: ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  return path;
}

/** Both CA files or neither. */
function tlsCaFrom(env: NodeJS.ProcessEnv): ControllerConfig['tlsCa'] {
  const cert = env.SWITCHBOARD_TLS_CA_CERT;
  const key = env.SWITCHBOARD_TLS_CA_KEY;
  if (!cert && !key) return null;
  if (!cert || !key) {
    throw new ConfigError(
      `${cert ? 'SWITCHBOARD_TLS_CA_KEY' : 'SWITCHBOARD_TLS_CA_CERT'} must be set too: the CA certificate and its key go together`,
    );
  }
  return { certFile: readableFile(env, 'SWITCHBOARD_TLS_CA_CERT'), keyFile: readableFile(env, 'SWITCHBOARD_TLS_CA_KEY') };
}

/** Reads SWITCHBOARD_SECRET_KEY (base64 or hex, 32 bytes) or keeps a generated one in the data dir. */
function loadSecretKey(env: NodeJS.ProcessEnv, dataDir: string): Buffer {
  const raw = env.SWITCHBOARD_SECRET_KEY;
  if (raw) {
    const key = /^[0-9a-f]{64}$/i.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
    if (key.length !== 32) {
      throw new ConfigError('SWITCHBOARD_SECRET_KEY must be 32 bytes, as 64 hex characters or base64');
    }
    return key;
  }
  const file = join(dataDir, 'secret.key');
  if (existsSync(file)) {
    const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
    if (key.length !== 32) throw new ConfigError(`SWITCHBOARD_DATA_DIR holds a damaged secret key (${file} is not 32 bytes of base64)`);
    return key;
  }
  const key = randomBytes(32);
  const notWritable = (err: unknown) =>
    new ConfigError(`SWITCHBOARD_DATA_DIR is not writable: cannot create ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw notWritable(err);
  }
  try {
    writeFileSync(file, key.toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return loadSecretKey(env, dataDir); // another process just made it
    throw notWritable(err);
  }
  return key;
}

/** At least 16 characters of printable ASCII without spaces, so it fits an Authorization header. */
function metricsTokenFrom(env: NodeJS.ProcessEnv): string | null {
  const raw = env.SWITCHBOARD_METRICS_TOKEN;
  if (raw === undefined || raw === '') return null;
  if (!/^[\x21-\x7e]{16,}$/.test(raw)) {
    throw new ConfigError('SWITCHBOARD_METRICS_TOKEN must be at least 16 printable characters without spaces (e.g. openssl rand -hex 24)');
  }
  return raw;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): ControllerConfig {
  const dataDir = resolve(env.SWITCHBOARD_DATA_DIR || './data');
  const port = intFrom(ConfigError, env, 'PORT', 8080, 0, 65535);
  const host = env.HOST || '127.0.0.1';
  const tls = boolFrom(env, 'SWITCHBOARD_TLS');
  const logLevel = (env.LOG_LEVEL || 'info').toLowerCase();
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${env.LOG_LEVEL}"`);
  const tlsCa = tlsCaFrom(env);
  const publicUrl = urlFrom(ConfigError, env, 'SWITCHBOARD_PUBLIC_URL', ['http:', 'https:']) ?? `${tls ? 'https' : 'http'}://${host}:${port}`;
  return {
    port,
    host,
    databaseUrl: urlFrom(ConfigError, env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    natsUrl: urlFrom(ConfigError, env, 'NATS_URL', ['nats:', 'tls:', 'ws:', 'wss:']),
    dataDir,
    adminUsername: env.SWITCHBOARD_ADMIN_USERNAME || 'admin',
    adminPassword: env.SWITCHBOARD_ADMIN_PASSWORD || null,
    secretKey: loadSecretKey(env, dataDir),
    logLevel,
    publicUrl: publicUrl.replace(/\/$/, ''),
    tls,
    tlsCa,
    metricsToken: metricsTokenFrom(env),
    shutdownTimeoutMs: intFrom(ConfigError, env, 'SWITCHBOARD_SHUTDOWN_TIMEOUT_SECONDS', 25, 1, 3600) * 1000,
    trustProxy: trustProxyFrom(env.SWITCHBOARD_TRUST_PROXY, (message) => new ConfigError(message)),
  };
}
