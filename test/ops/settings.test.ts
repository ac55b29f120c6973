/**
 * The ops settings: each bad value stops the process at start with one line naming it; NATS_URL
 * credentials become connect options and never show in messages.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadAgentOpsConfig } from '../../agent/src/ops/config';
import { ConfigError, loadConfig } from '../../controller/src/config';
import { natsServers } from '../../shared/src/nats/jetstream';
import { redactUrls } from '../../shared/src/ops/redact';
import { spawnTs, stopAll } from '../helpers/processes';

afterAll(stopAll);

const dataDir = mkdtempSync(join(tmpdir(), 'sb-ops-config-'));

describe('controller settings', () => {
  it('reads SWITCHBOARD_METRICS_TOKEN and SWITCHBOARD_SHUTDOWN_TIMEOUT_SECONDS, with defaults', () => {
    expect(loadConfig({ SWITCHBOARD_DATA_DIR: dataDir })).toMatchObject({ metricsToken: null, shutdownTimeoutMs: 25_000 });
    expect(
      loadConfig({
        SWITCHBOARD_DATA_DIR: dataDir,
        SWITCHBOARD_METRICS_TOKEN: 'a-long-enough-token-1234',
        SWITCHBOARD_SHUTDOWN_TIMEOUT_SECONDS: '40',
      }),
    ).toMatchObject({
      metricsToken: 'a-long-enough-token-1234',
      shutdownTimeoutMs: 40_000,
    });
  });

  it('refuses bad values with one line naming the setting', () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ SWITCHBOARD_METRICS_TOKEN: 'short' }, /^SWITCHBOARD_METRICS_TOKEN must be at least 16 printable characters/],
      [{ SWITCHBOARD_METRICS_TOKEN: 'has spaces in the token value' }, /^SWITCHBOARD_METRICS_TOKEN /],
      [{ SWITCHBOARD_SHUTDOWN_TIMEOUT_SECONDS: '0' }, /^SWITCHBOARD_SHUTDOWN_TIMEOUT_SECONDS must be a whole number from 1 to 3600, got "0"$/],
      [{ SWITCHBOARD_SHUTDOWN_TIMEOUT_SECONDS: 'soon' }, /^SWITCHBOARD_SHUTDOWN_TIMEOUT_SECONDS /],
    ];
    for (const [env, message] of cases) {
      expect(() => loadConfig({ SWITCHBOARD_DATA_DIR: dataDir, ...env }), JSON.stringify(env)).toThrow(ConfigError);
      expect(() => loadConfig({ SWITCHBOARD_DATA_DIR: dataDir, ...env })).toThrow(message);
    }
  });
});

describe('agent settings', () => {
  it('reads the ops server and stop settings, with defaults', () => {
    expect(loadAgentOpsConfig({})).toEqual({ healthPort: null, healthHost: '127.0.0.1', metricsToken: null, stopGraceMs: 20_000 });
    expect(
      loadAgentOpsConfig({
        SWITCHBOARD_AGENT_HEALTH_PORT: '9464',
        SWITCHBOARD_AGENT_HEALTH_HOST: '0.0.0.0',
        SWITCHBOARD_METRICS_TOKEN: 'a-long-enough-token-1234',
        SWITCHBOARD_AGENT_STOP_GRACE_SECONDS: '0',
      }),
    ).toEqual({ healthPort: 9464, healthHost: '0.0.0.0', metricsToken: 'a-long-enough-token-1234', stopGraceMs: 0 });
  });

  it('stops a real agent at start with one line naming a bad setting', async () => {
    for (const [env, line] of [
      [
        { SWITCHBOARD_AGENT_HEALTH_PORT: 'ninety' },
        'switchboard-agent: SWITCHBOARD_AGENT_HEALTH_PORT must be a whole number from 0 to 65535, got "ninety"',
      ],
      [
        { SWITCHBOARD_AGENT_STOP_GRACE_SECONDS: '-1' },
        'switchboard-agent: SWITCHBOARD_AGENT_STOP_GRACE_SECONDS must be a whole number from 0 to 3600, got "-1"',
      ],
      [{ SWITCHBOARD_METRICS_TOKEN: 'short' }, 'switchboard-agent: SWITCHBOARD_METRICS_TOKEN must be at least 16 printable characters'],
    ] as const) {
      const p = spawnTs('agent/src/main.ts', {
        NATS_URL: 'nats://127.0.0.1:1',
        SWITCHBOARD_AGENT_STATE_DIR: mkdtempSync(join(tmpdir(), 'sb-ops-agent-')),
        ...env,
      });
      expect(await p.exited).toBe(1);
      expect(p.output().trim().split('\n')).toHaveLength(1);
      expect(p.output()).toContain(line);
    }
  });
});

describe('NATS_URL credentials', () => {
  it('become user/password or token options, from the first server that has them', () => {
    expect(natsServers('nats://127.0.0.1:4222')).toEqual({ servers: ['nats://127.0.0.1:4222'] });
    expect(natsServers('nats://agent-a:p%40ss:w@nats1:4222, nats://nats2:4222')).toEqual({
      servers: ['nats://nats1:4222', 'nats://nats2:4222'],
      user: 'agent-a',
      pass: 'p@ss:w',
    });
    expect(natsServers('tls://s3cr3t-token@nats1:4222')).toEqual({ servers: ['tls://nats1:4222'], token: 's3cr3t-token' });
  });

  it('are replaced in messages', () => {
    expect(redactUrls('NATS_URL: cannot connect to nats://agent-a:pw@nats1:4222,nats://tok@nats2:4222: refused')).toBe(
      'NATS_URL: cannot connect to nats://[redacted]@nats1:4222,nats://[redacted]@nats2:4222: refused',
    );
    expect(redactUrls('postgres://switchboard:secret@db:5432/x')).toBe('postgres://[redacted]@db:5432/x');
  });
});
