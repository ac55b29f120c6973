/**
 * deploy/: what can be checked without a container engine or systemd as PID 1.
 *  - docker-compose.yml parses and wires PostgreSQL, NATS with JetStream, the controller and two
 *    agents in two sites; every variable it needs is in env/compose.env.example.
 *  - the Dockerfile is multi-stage, installs production dependencies only, runs as non-root.
 *  - nats-server.conf passes `nats-server -t`; rendered with real ids it runs a real job with
 *    the per-agent users, and an agent's user is refused another pool's jobs and another
 *    agent's results subject.
 *  - the systemd units pass `systemd-analyze verify` cleanly and score a low exposure in
 *    `systemd-analyze security --offline` (skipped where systemd-analyze is missing).
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Events, connect, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startTestController, type TestController } from '../helpers/controller';
import { NATS_SERVER, ROOT, spawnProcess, startAgentProcess, stopAll, waitUntil, type AgentProcess, type Proc } from '../helpers/processes';
import { freePort } from '../helpers/net';
import { startSshDevice, type SimSshDevice } from '../sim/ssh';
import { makeDevice, makeSite } from '../agents/helpers';
import { verifiedHostKey } from './helpers';

const HOST_KEY = verifiedHostKey();

const run = promisify(execFile);
const DEPLOY = join(ROOT, 'deploy');
const read = (path: string) => readFileSync(join(DEPLOY, path), 'utf8');
const SYSTEMD_ANALYZE = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find((p) => existsSync(p));

describe('docker-compose.yml', () => {
  const compose = parse(read('docker-compose.yml'), { merge: true }); // compose honours YAML merge keys (<<)

  it('parses and has PostgreSQL, NATS with JetStream, the controller and two agents in two sites', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['agent-site-a', 'agent-site-b', 'controller', 'nats', 'postgres']);
    const { postgres, nats, controller } = compose.services;
    expect(postgres.image).toMatch(/^postgres:/);
    expect(nats.image).toMatch(/^nats:/);
    expect(nats.command).toEqual(['-c', '/etc/nats/nats-server.conf']);
    expect(nats.volumes).toContain('./nats-server.conf:/etc/nats/nats-server.conf:ro');
    expect(read('nats-server.conf')).toMatch(/^jetstream \{/m);
    expect(controller.build).toEqual({ context: '..', dockerfile: 'deploy/Dockerfile' });
    expect(controller.environment.DATABASE_URL).toContain('@postgres:5432/');
    expect(controller.environment.NATS_URL).toMatch(/^nats:\/\/controller:\$\{NATS_CONTROLLER_PASSWORD\}@nats:4222$/);
    expect(controller.healthcheck.test.join(' ')).toContain('/readyz');
    expect(controller.depends_on).toEqual({ postgres: { condition: 'service_healthy' }, nats: { condition: 'service_healthy' } });
    // The stop grace covers the controller's own shutdown bound.
    expect(parseInt(controller.stop_grace_period, 10)).toBeGreaterThan(Number(controller.environment.SWITCHBOARD_SHUTDOWN_TIMEOUT_SECONDS));
  });

  it('runs each agent with its own NATS user, health port and state volume, hardened like the controller', () => {
    const agents = ['agent-site-a', 'agent-site-b'].map((name) => ({ name, ...compose.services[name] }));
    const users = agents.map((a) => /^nats:\/\/([^:]+):/.exec(a.environment.NATS_URL)?.[1]);
    expect(users).toEqual(['agent-site-a', 'agent-site-b']);
    for (const a of agents) {
      expect(a.command).toEqual(['agent/src/main.ts']);
      expect(a.environment.SWITCHBOARD_URL).toBe('http://controller:8080');
      expect(a.environment.SWITCHBOARD_AGENT_HEALTH_PORT).toBe('9464');
      expect(a.volumes).toHaveLength(1);
      expect(a.depends_on.nats.condition).toBe('service_healthy');
    }
    expect(new Set(agents.map((a) => a.volumes[0])).size).toBe(2);
    for (const name of ['controller', 'agent-site-a', 'agent-site-b']) {
      const s = compose.services[name];
      expect(s, name).toMatchObject({ read_only: true, cap_drop: ['ALL'], security_opt: ['no-new-privileges:true'], init: true });
    }
  });

  it('documents every variable it reads in env/compose.env.example', () => {
    const needed = new Set([...read('docker-compose.yml').matchAll(/\$\{([A-Z0-9_]+)/g)].map((m) => m[1]));
    const documented = new Set([...read('env/compose.env.example').matchAll(/^([A-Z0-9_]+)=/gm)].map((m) => m[1]));
    expect([...needed].filter((v) => !documented.has(v))).toEqual([]);
  });
});

describe('Dockerfile', () => {
  const text = read('Dockerfile');

  it('is multi-stage, installs production dependencies only and runs as a non-root user', () => {
    const stages = [...text.matchAll(/^FROM\s+(\S+)(?:\s+AS\s+(\S+))?/gim)];
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(text).toMatch(/npm ci --omit=dev/);
    expect(text).toMatch(/COPY --from=deps/);
    const users = [...text.matchAll(/^USER\s+(\S+)/gim)].map((m) => m[1]);
    expect(users.at(-1)).toBe('node');
    // Only the runtime stage's last USER counts: nothing switches back to root after it.
    expect(text.slice(text.lastIndexOf('USER node'))).not.toMatch(/^USER\s+root/im);
    expect(text).toMatch(/^HEALTHCHECK /m);
    expect(text).toMatch(/^ENTRYPOINT \["node", "--import", "tsx"\]/m);
    // Everything the image copies exists, and the build context keeps out tests and node_modules.
    for (const m of text.matchAll(/^COPY (?:--chown=\S+ )?(\S+) /gm))
      if (!m[0].includes('--from')) expect(existsSync(join(ROOT, m[1])), m[1]).toBe(true);
    const ignore = read('Dockerfile.dockerignore');
    expect(ignore).toMatch(/^\*\*$/m);
    expect(ignore).toMatch(/node_modules/);
  });
});

describe('systemd units', () => {
  const units = ['switchboard-controller.service', 'switchboard-agent@.service'];

  it.skipIf(!SYSTEMD_ANALYZE)('pass systemd-analyze verify without a warning', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-units-'));
    try {
      for (const unit of units) {
        // A template is verified as one of its instances.
        const file = join(dir, unit.replace('@.service', '@site-a.service'));
        writeFileSync(file, read(`systemd/${unit}`));
        const r = spawnSync(SYSTEMD_ANALYZE!, ['verify', file], { encoding: 'utf8' });
        expect(r.status, `${unit}: ${r.stderr}`).toBe(0);
        expect(`${r.stdout}${r.stderr}`.trim(), unit).toBe('');
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(!SYSTEMD_ANALYZE)('are hardened: exposure of at most 2.0 in systemd-analyze security', async () => {
    for (const unit of units) {
      const { stdout } = await run(SYSTEMD_ANALYZE!, ['security', '--offline=true', '--no-pager', join(DEPLOY, 'systemd', unit)]).catch((e) => e);
      const score = Number(/Overall exposure level for \S+: ([\d.]+)/.exec(stdout)?.[1]);
      expect(score, `${unit}\n${stdout}`).toBeLessThanOrEqual(2.0);
    }
  });

  it("run as their own users, stop with SIGTERM within a bound above the processes' own", () => {
    const controller = read('systemd/switchboard-controller.service');
    const agent = read('systemd/switchboard-agent@.service');
    expect(controller).toMatch(/^User=switchboard$/m);
    expect(agent).toMatch(/^User=switchboard-agent$/m);
    expect(Number(/^TimeoutStopSec=(\d+)/m.exec(controller)?.[1])).toBeGreaterThan(25);
    expect(Number(/^TimeoutStopSec=(\d+)/m.exec(agent)?.[1])).toBeGreaterThan(20);
    expect(agent).toMatch(/^RestartPreventExitStatus=3$/m);
    for (const text of [controller, agent]) {
      expect(text).toMatch(/^NoNewPrivileges=yes$/m);
      expect(text).toMatch(/^ProtectSystem=strict$/m);
      expect(text).toMatch(/^CapabilityBoundingSet=$/m);
      expect(text).not.toMatch(/^MemoryDenyWriteExecute=yes/m); // V8 needs W+X pages
    }
  });
});

describe('nats-server.conf', () => {
  const env = { NATS_CONTROLLER_PASSWORD: 'controller-pw-0123', NATS_AGENT_A_PASSWORD: 'agent-a-pw-0123', NATS_AGENT_B_PASSWORD: 'agent-b-pw-0123' };

  it('passes nats-server -t', async () => {
    const { stdout, stderr } = await run(NATS_SERVER, ['-t', '-c', join(DEPLOY, 'nats-server.conf')], { env: { ...process.env, ...env } });
    expect(`${stdout}${stderr}`).toContain('is valid');
  });

  describe('with real ids: the per-agent users run jobs and stay inside their own subjects', () => {
    let tc: TestController;
    let sim: SimSshDevice;
    let dir: string;
    let port: number;
    let natsProc: Proc;
    let agentA: AgentProcess;
    const ids = { ORG_ID: '', SITE_A_ID: '', SITE_B_ID: '', AGENT_A_ID: '', AGENT_B_ID: '' };
    let tokens: { a: string; b: string };

    /** The example config with these ids, on this test's own port and store. */
    function render(): string {
      let text = read('nats-server.conf')
        .replace(/^listen: .*$/m, `listen: 127.0.0.1:${port}`)
        .replace(/^http: .*$/m, '')
        .replace(/store_dir: .*/, `store_dir: ${join(dir, 'js')}`);
      // Longest names first: SITE_A_ID must not eat part of another placeholder.
      for (const [name, value] of Object.entries(ids).sort((a, b) => b[0].length - a[0].length))
        text = text.split(name).join(value || `unset_${name.toLowerCase()}`);
      const file = join(dir, 'nats-server.conf');
      writeFileSync(file, text);
      return file;
    }
    const spawnNats = (file: string) => spawnProcess(NATS_SERVER, ['-c', file], { env });
    // Agents receive replies on their own inbox prefix only (_INBOX.<agent id>, as enrollment tells them).
    const inboxOf: Record<string, () => string> = {
      'agent-site-a': () => `_INBOX.${ids.AGENT_A_ID}`,
      'agent-site-b': () => `_INBOX.${ids.AGENT_B_ID}`,
    };
    const as = (user: string, password: string) =>
      connect({ servers: `nats://127.0.0.1:${port}`, user, pass: password, reconnect: false, inboxPrefix: inboxOf[user]?.() });

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'sb-natsconf-'));
      port = await freePort();
      natsProc = spawnNats(render());
      await waitUntil('nats-server with the example config', async () => {
        const nc = await as('controller', env.NATS_CONTROLLER_PASSWORD);
        await nc.close();
        return true;
      });
      tc = await startTestController({
        settings: { 'agents.heartbeat_seconds': 1 },
        config: { natsUrl: `nats://controller:${env.NATS_CONTROLLER_PASSWORD}@127.0.0.1:${port}`, natsPrefix: 'sb' },
      });
      const org = await tc.createOrgUser(['org_admin']);
      const siteA = await makeSite(tc, org, 'site-a');
      const siteB = await makeSite(tc, org, 'site-b');
      const a = (await tc.request('POST', '/api/agents', { token: org.token, body: { name: 'agent-site-a', site_id: siteA.id } })).body;
      const b = (await tc.request('POST', '/api/agents', { token: org.token, body: { name: 'agent-site-b', site_id: siteB.id } })).body;
      Object.assign(ids, { ORG_ID: org.orgId, SITE_A_ID: siteA.id, SITE_B_ID: siteB.id, AGENT_A_ID: a.id, AGENT_B_ID: b.id });
      tokens = { a: a.enrollment_token, b: b.enrollment_token };
      // The agents' ids exist now: give NATS the real permissions (authorization reloads live).
      render();
      natsProc.signal('SIGHUP');
      sim = await startSshDevice({ hostKey: HOST_KEY, hostname: 'site-a-sw1' });
      (tc as any).org = org;
      (tc as any).siteA = siteA;
    });

    afterAll(async () => {
      await agentA?.stop(30_000);
      await sim?.close();
      await tc?.close();
      await stopAll();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it("an agent connecting as its own NATS user enrolls, takes its pool's job and reports the result", async () => {
      const org = (tc as any).org;
      await waitUntil('NATS to reload the agent users', async () => {
        const nc = await as('agent-site-a', env.NATS_AGENT_A_PASSWORD);
        try {
          await nc.request(`$JS.API.STREAM.INFO.SB_JOBS`, undefined, { timeout: 1_000 });
          return true;
        } finally {
          await nc.close();
        }
      });
      agentA = await startAgentProcess({
        natsUrl: `nats://agent-site-a:${env.NATS_AGENT_A_PASSWORD}@127.0.0.1:${port}`,
        controllerUrl: tc.url,
        enrollToken: tokens.a,
        concurrency: 4,
      });
      const deviceId = await makeDevice(tc, org, { port: sim.port, site_id: (tc as any).siteA.id });
      const [jobId] = await tc.services.jobs.submit([{ orgId: org.orgId, kind: 'test_credential', deviceId, params: {}, deadlineMs: 30_000 }]);
      const [outcome] = await tc.services.jobs.wait([jobId], 40_000);
      expect(outcome).toMatchObject({ status: 'succeeded', agentId: ids.AGENT_A_ID });
      // Heartbeats flow too: the agent is online and reported its connections.
      await waitUntil('agent A online with its health report', async () => {
        const res = await tc.request('GET', '/api/agents', { token: org.token });
        const row = res.body.agents.find((x: any) => x.id === ids.AGENT_A_ID);
        return row?.status === 'online' && row.health?.nats_connected === true;
      });
      expect(agentA.output()).not.toMatch(/Permissions Violation/i);
    });

    it("refuses agent A the job queue of site B, results as agent B, and the streams' configuration", async () => {
      const nc: NatsConnection = await as('agent-site-a', env.NATS_AGENT_A_PASSWORD);
      const errors: string[] = [];
      void (async () => {
        for await (const s of nc.status()) {
          // The server's -ERR 'Permissions Violation for <operation> to "<subject>"', as nats.js hands it on.
          const ctx = (s as unknown as { permissionContext?: { operation: string; subject: string } }).permissionContext;
          if (s.type === Events.Error && ctx) errors.push(`${ctx.operation} ${ctx.subject}`);
        }
      })();
      try {
        const refused = async (subject: string) => {
          const err = await nc.request(subject, new TextEncoder().encode('{}'), { timeout: 1_500 }).then(
            () => null,
            (e: Error) => e,
          );
          expect(err, subject).not.toBeNull();
          expect(String(err?.message ?? err), subject).toMatch(/permission|timeout|no responders/i);
        };
        await refused(`$JS.API.CONSUMER.MSG.NEXT.SB_JOBS.jobs_${ids.ORG_ID}_${ids.SITE_B_ID}`);
        await refused(`sb.results.${ids.AGENT_B_ID}`);
        await refused('$JS.API.STREAM.DELETE.SB_JOBS');
        await refused('$JS.API.STREAM.PURGE.SB_RESULTS');
        const sub = nc.subscribe(`sb.jobs.${ids.ORG_ID}.${ids.SITE_B_ID}`);
        nc.subscribe('_INBOX.>'); // every other agent's replies
        await nc.flush();
        await waitUntil(
          'the server to refuse the subscription',
          () => errors.some((e) => e.endsWith(`sb.jobs.${ids.ORG_ID}.${ids.SITE_B_ID}`)),
          undefined,
          5_000,
        );
        await waitUntil('the server to refuse the inbox snooping', () => errors.some((e) => e.endsWith(' _INBOX.>')), undefined, 5_000);
        expect(sub.isClosed()).toBe(true);
        const seen = errors.join('\n');
        expect(seen).toContain(`publish $JS.API.CONSUMER.MSG.NEXT.SB_JOBS.jobs_${ids.ORG_ID}_${ids.SITE_B_ID}`);
        expect(seen).toContain(`publish sb.results.${ids.AGENT_B_ID}`);
        expect(seen).toContain('publish $JS.API.STREAM.DELETE.SB_JOBS');
        expect(seen).toMatch(new RegExp(`^subscri\\w* sb\\.jobs\\.${ids.ORG_ID}\\.${ids.SITE_B_ID}$`, 'm'));
      } finally {
        await nc.close();
      }
      // Its own subjects are still allowed.
      const ok = await as('agent-site-a', env.NATS_AGENT_A_PASSWORD);
      try {
        const info = await ok.request(`$JS.API.CONSUMER.INFO.SB_JOBS.jobs_${ids.ORG_ID}_${ids.SITE_A_ID}`, undefined, { timeout: 2_000 });
        expect(JSON.parse(new TextDecoder().decode(info.data)).name).toBe(`jobs_${ids.ORG_ID}_${ids.SITE_A_ID}`);
      } finally {
        await ok.close();
      }
    });
  });
});
