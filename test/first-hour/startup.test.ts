/**
 * No silent surprises at start: a NATS without JetStream, two processes on one data directory,
 * an administrator password that cannot apply any more, an agent that cannot reach NATS or is not
 * enrolled, and an agent coming online — each said in one line a person can act on.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootstrap } from '../../controller/src/bootstrap';
import { createDb } from '../../controller/src/db/knex';
import { createLogger } from '../../controller/src/logger';
import { freePort, listensOn } from '../helpers/net';
import { createTestDatabase } from '../helpers/postgres';
import {
  NATS_SERVER,
  spawnAgent,
  spawnProcess,
  spawnTs,
  startControllerProcess,
  startNats,
  stopAll,
  waitUntil,
  type NatsServer,
} from '../helpers/processes';

const ADMIN_PASSWORD = 'bootstrap-admin-password';
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let nats: NatsServer;

beforeAll(async () => {
  database = await createTestDatabase();
  nats = await startNats();
}, 60_000);

afterAll(async () => {
  await stopAll();
  await database?.drop();
});

/** The lines a process printed for a person (not JSON log lines). */
const plainLines = (output: string) => output.split('\n').filter((l) => l.trim() && !l.startsWith('{'));

async function signIn(url: string): Promise<string> {
  const res = await fetch(`${url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: ADMIN_PASSWORD }),
  });
  return ((await res.json()) as { access_token: string }).access_token;
}

describe('the controller at start', () => {
  // These two run side by side: each start ends on its own NATS answer (or the lack of one, 8 s of
  // it), and neither serves anything or shares a data directory.
  it.concurrent('refuses a NATS server without JetStream with one line', { timeout: 120_000 }, async ({ expect }) => {
    const port = await freePort();
    const plain = spawnProcess(NATS_SERVER, ['-a', '127.0.0.1', '-p', String(port)]);
    await waitUntil('nats-server without JetStream', () => listensOn(plain.pid, port), plain, 15_000);
    const dataDir = mkdtempSync(join(tmpdir(), 'sb-first-hour-'));
    try {
      const ctl = spawnTs('controller/src/main.ts', {
        PORT: '0',
        DATABASE_URL: database.url,
        NATS_URL: `nats://127.0.0.1:${port}`,
        SWITCHBOARD_DATA_DIR: dataDir,
        LOG_LEVEL: 'warn',
        SWITCHBOARD_ADMIN_PASSWORD: ADMIN_PASSWORD,
      });
      expect(await ctl.exited).toBe(1);
      expect(plainLines(ctl.output())).toEqual([
        `switchboard: NATS_URL: the NATS server at nats://127.0.0.1:${port} does not have JetStream enabled; ` +
          'start it with JetStream (nats-server -js, or a "jetstream {}" block in its configuration)',
      ]);
    } finally {
      await plain.kill();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it.concurrent('stops with one line when no NATS answers at NATS_URL, rather than waiting in silence', { timeout: 120_000 }, async ({ expect }) => {
    const nowhere = `nats://127.0.0.1:${await freePort()}`;
    const dataDir = mkdtempSync(join(tmpdir(), 'sb-first-hour-'));
    try {
      const ctl = spawnTs('controller/src/main.ts', {
        PORT: '0',
        DATABASE_URL: database.url,
        NATS_URL: nowhere,
        SWITCHBOARD_DATA_DIR: dataDir,
        LOG_LEVEL: 'warn',
        SWITCHBOARD_ADMIN_PASSWORD: ADMIN_PASSWORD,
      });
      expect(await ctl.exited).toBe(1);
      expect(plainLines(ctl.output())).toEqual([
        `switchboard: NATS_URL: no NATS server answered at ${nowhere} within 8 s; start one with JetStream (nats-server -js) or correct NATS_URL`,
      ]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it(
    "refuses a second process on one data directory, naming it and the holder; a dead holder's lock is taken over",
    { timeout: 180_000 },
    async () => {
      const first = await startControllerProcess({ databaseUrl: database.url, natsUrl: nats.url });
      const lock = JSON.parse(readFileSync(join(first.dataDir, 'switchboard.lock'), 'utf8'));
      expect(lock.pid).toBe(first.pid);

      const second = spawnTs('controller/src/main.ts', {
        PORT: '0',
        DATABASE_URL: database.url,
        NATS_URL: nats.url,
        SWITCHBOARD_DATA_DIR: first.dataDir,
        SWITCHBOARD_SECRET_KEY: first.secretKey,
        LOG_LEVEL: 'warn',
      });
      expect(await second.exited).toBe(1);
      const [line, ...rest] = plainLines(second.output());
      expect(rest).toEqual([]);
      expect(line).toContain(`switchboard: SWITCHBOARD_DATA_DIR: ${first.dataDir} is in use by another Switchboard process (pid ${first.pid} `);
      expect((await fetch(`${first.url}/healthz`)).ok).toBe(true);

      // SIGKILL leaves the lock file behind; the next start sees its pid gone and takes it over.
      await first.kill('SIGKILL');
      const again = await first.restart();
      expect(JSON.parse(readFileSync(join(first.dataDir, 'switchboard.lock'), 'utf8')).pid).toBe(again.pid);
      // A clean stop removes the lock.
      expect(await again.stop()).toBe(0);
      expect(() => readFileSync(join(first.dataDir, 'switchboard.lock'))).toThrow(/ENOENT/);
    },
  );

  it('says SWITCHBOARD_ADMIN_PASSWORD was ignored when the administrator already exists, and how to change it', { timeout: 120_000 }, async () => {
    // The administrator a first start created: the bootstrap that start runs, run here rather than by
    // a whole controller process started and stopped for it.
    const db = await createDb(database.url, tmpdir());
    try {
      await bootstrap(db, { username: 'admin', password: ADMIN_PASSWORD }, createLogger('silent'));
    } finally {
      await db.destroy();
    }
    const ctl = await startControllerProcess({ databaseUrl: database.url, natsUrl: nats.url, adminPassword: 'another-password-entirely' });
    await waitUntil('the warning', () => ctl.output().includes('SWITCHBOARD_ADMIN_PASSWORD was ignored'), ctl, 30_000);
    const warning = ctl
      .output()
      .split('\n')
      .find((l) => l.includes('SWITCHBOARD_ADMIN_PASSWORD was ignored'))!;
    expect(JSON.parse(warning).msg).toMatch(/read on the first start only.*PUT \/api\/auth\/password/);
    const res = await fetch(`${ctl.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: 'another-password-entirely' }),
    });
    expect(res.status).toBe(401);
    await ctl.stop();
  });
});

describe('an agent at start', () => {
  it('without an identity or enrollment token stops with one line saying what to set', { timeout: 60_000 }, async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'sb-first-hour-agent-'));
    try {
      const agent = spawnAgent({ NATS_URL: nats.url, SWITCHBOARD_URL: 'http://127.0.0.1:9', SWITCHBOARD_AGENT_STATE_DIR: stateDir });
      expect(await agent.exited).toBe(1);
      expect(plainLines(agent.output())).toEqual([
        'switchboard-agent: SWITCHBOARD_ENROLL_TOKEN is required to enroll: create the agent with POST /api/agents and pass its enrollment_token',
      ]);
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
  });

  it('says it cannot reach NATS while it retries; once it runs, the controller logs it online', { timeout: 180_000 }, async () => {
    const ctl = await startControllerProcess({ databaseUrl: database.url, natsUrl: nats.url, logLevel: 'info' });
    const token = await signIn(ctl.url);
    // Beats every second rather than the default ten, so that the later heartbeat checked below comes
    // soon; an agent is still logged online again only after offline_after_seconds (30) without one.
    const settings = await fetch(`${ctl.url}/api/admin/settings`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ settings: { 'agents.heartbeat_seconds': 1 } }),
    });
    expect(settings.status).toBe(200);
    const created = await fetch(`${ctl.url}/api/agents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ name: 'first-hour-agent', site_id: null }),
    }).then((r) => r.json() as Promise<{ id: string; enrollment_token: string }>);
    const stateDir = mkdtempSync(join(tmpdir(), 'sb-first-hour-agent-'));
    const nowhere = `nats://127.0.0.1:${await freePort()}`;
    try {
      const waiting = spawnAgent({
        NATS_URL: nowhere,
        SWITCHBOARD_URL: ctl.url,
        SWITCHBOARD_ENROLL_TOKEN: created.enrollment_token,
        SWITCHBOARD_AGENT_STATE_DIR: stateDir,
        LOG_LEVEL: 'info',
      });
      await waitUntil(
        'the agent to say it cannot reach NATS',
        () => waiting.output().includes(`cannot reach NATS at ${nowhere} yet; retrying`),
        waiting,
        60_000,
      );
      expect(waiting.running).toBe(true);
      expect(ctl.output()).not.toContain('agent online: first-hour-agent');
      await waiting.stop();

      // The identity from that enrollment is kept: the same agent, now with a NATS it can reach.
      const agent = spawnAgent({ NATS_URL: nats.url, SWITCHBOARD_AGENT_STATE_DIR: stateDir, LOG_LEVEL: 'info' });
      await waitUntil('the controller to log the agent online', () => ctl.output().includes('agent online: first-hour-agent'), agent, 60_000);
      const line = JSON.parse(
        ctl
          .output()
          .split('\n')
          .find((l) => l.includes('agent online: first-hour-agent'))!,
      );
      expect(line).toMatchObject({ agent_id: created.id, agent: 'first-hour-agent', pool: 'default' });
      expect(agent.output()).toContain('connected to NATS');
      // Later heartbeats of an agent already online are not logged again.
      await waitUntil(
        'a second heartbeat',
        async () => {
          const list = (await fetch(`${ctl.url}/api/agents`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.json())) as {
            agents: { id: string; last_seen_at: string }[];
          };
          const seen = list.agents.find((a) => a.id === created.id)?.last_seen_at;
          return seen !== undefined && Date.parse(seen) > line.time;
        },
        agent,
        60_000,
      );
      expect(ctl.output().split('agent online: first-hour-agent').length).toBe(2);
      await agent.stop();
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
});
