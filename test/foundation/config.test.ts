import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../controller/src/config';

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sb-config-'));
  dirs.push(dir);
  return dir;
}

const load = (env: Record<string, string>) => loadConfig({ SWITCHBOARD_DATA_DIR: dataDir(), ...env });

describe('loadConfig', () => {
  it("has DESIGN.md's defaults", () => {
    const dir = dataDir();
    const config = loadConfig({ SWITCHBOARD_DATA_DIR: dir });
    expect(config).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      databaseUrl: null,
      natsUrl: null,
      dataDir: dir,
      adminUsername: 'admin',
      adminPassword: null,
      logLevel: 'info',
      tls: false,
      tlsCa: null,
      publicUrl: 'http://127.0.0.1:8080',
    });
  });

  it('generates the secret key into the data dir once, mode 0600, and reuses it', () => {
    const dir = dataDir();
    const first = loadConfig({ SWITCHBOARD_DATA_DIR: dir }).secretKey;
    expect(first).toHaveLength(32);
    const file = join(dir, 'secret.key');
    expect(existsSync(file)).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(loadConfig({ SWITCHBOARD_DATA_DIR: dir }).secretKey.equals(first)).toBe(true);
    expect(Buffer.from(readFileSync(file, 'utf8').trim(), 'base64').equals(first)).toBe(true);
  });

  it('takes SWITCHBOARD_SECRET_KEY as hex or base64', () => {
    const key = Buffer.alloc(32, 7);
    expect(load({ SWITCHBOARD_SECRET_KEY: key.toString('hex') }).secretKey.equals(key)).toBe(true);
    expect(load({ SWITCHBOARD_SECRET_KEY: key.toString('base64') }).secretKey.equals(key)).toBe(true);
  });

  it('reads every variable', () => {
    const config = load({
      PORT: '9000',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://u@db/sb',
      NATS_URL: 'nats://n:4222',
      SWITCHBOARD_ADMIN_USERNAME: 'root',
      SWITCHBOARD_ADMIN_PASSWORD: 'pw',
      LOG_LEVEL: 'DEBUG',
      SWITCHBOARD_PUBLIC_URL: 'https://sb.example.net/',
      SWITCHBOARD_TLS: 'yes',
    });
    expect(config).toMatchObject({
      port: 9000,
      host: '0.0.0.0',
      databaseUrl: 'postgres://u@db/sb',
      natsUrl: 'nats://n:4222',
      adminUsername: 'root',
      adminPassword: 'pw',
      logLevel: 'debug',
      publicUrl: 'https://sb.example.net',
      tls: true,
    });
  });

  const bad: [string, Record<string, string>][] = [
    ['PORT', { PORT: 'abc' }],
    ['PORT', { PORT: '70000' }],
    ['PORT', { PORT: '80.5' }],
    ['DATABASE_URL', { DATABASE_URL: 'mysql://db/switchboard' }],
    ['DATABASE_URL', { DATABASE_URL: 'not a url' }],
    ['NATS_URL', { NATS_URL: 'http://nats:4222' }],
    ['LOG_LEVEL', { LOG_LEVEL: 'loud' }],
    ['SWITCHBOARD_TLS', { SWITCHBOARD_TLS: 'maybe' }],
    ['SWITCHBOARD_SECRET_KEY', { SWITCHBOARD_SECRET_KEY: 'short' }],
    ['SWITCHBOARD_TLS_CA_KEY', { SWITCHBOARD_TLS_CA_CERT: '/etc/hostname' }],
    ['SWITCHBOARD_TLS_CA_CERT', { SWITCHBOARD_TLS_CA_KEY: '/etc/hostname' }],
    ['SWITCHBOARD_TLS_CA_CERT', { SWITCHBOARD_TLS_CA_CERT: '/no/such/ca.crt', SWITCHBOARD_TLS_CA_KEY: '/etc/hostname' }],
    ['SWITCHBOARD_PUBLIC_URL', { SWITCHBOARD_PUBLIC_URL: 'ftp://sb.example.net' }],
  ];
  for (const [name, env] of bad) {
    it(`refuses ${JSON.stringify(env)} with one line naming ${name}`, () => {
      let error: unknown;
      try {
        load(env);
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(ConfigError);
      const message = (error as Error).message;
      expect(message.startsWith(name)).toBe(true);
      expect(message).not.toContain('\n');
    });
  }

  it('names SWITCHBOARD_DATA_DIR when it cannot be written', () => {
    const file = join(dataDir(), 'a-file');
    writeFileSync(file, '');
    expect(() => loadConfig({ SWITCHBOARD_DATA_DIR: join(file, 'data') })).toThrow(/^SWITCHBOARD_DATA_DIR is not writable/);
  });
});
