import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

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
}

/** A missing or bad setting stops the process with one line naming the setting. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

function intFrom(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function urlFrom(env: NodeJS.ProcessEnv, name: string, protocols: string[]): string | null {
  const raw = env[name];
  if (!raw) return null;
  for (const part of raw.split(',')) {
    let url: URL;
    try {
      url = new URL(part.trim());
    } catch {
      throw new ConfigError(`${name} is not a valid URL: "${part}"`);
    }
    if (!protocols.includes(url.protocol)) {
      throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got "${url.protocol}"`);
    }
  }
  return raw;
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
  if (existsSync(file)) return Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  writeFileSync(file, key.toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  return key;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): ControllerConfig {
  const dataDir = resolve(env.SWITCHBOARD_DATA_DIR || './data');
  const port = intFrom(env, 'PORT', 8080, 0, 65535);
  const host = env.HOST || '127.0.0.1';
  const tls = env.SWITCHBOARD_TLS === '1' || env.SWITCHBOARD_TLS === 'true';
  const publicUrl =
    urlFrom(env, 'SWITCHBOARD_PUBLIC_URL', ['http:', 'https:']) ?? `${tls ? 'https' : 'http'}://${host}:${port}`;
  return {
    port,
    host,
    databaseUrl: urlFrom(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    natsUrl: urlFrom(env, 'NATS_URL', ['nats:', 'tls:', 'ws:', 'wss:']),
    dataDir,
    adminUsername: env.SWITCHBOARD_ADMIN_USERNAME || 'admin',
    adminPassword: env.SWITCHBOARD_ADMIN_PASSWORD || null,
    secretKey: loadSecretKey(env, dataDir),
    logLevel: env.LOG_LEVEL || 'info',
    publicUrl: publicUrl.replace(/\/$/, ''),
    tls,
  };
}
