/**
 * Agent status events on /api/live: a real agent process enrolls and heartbeats over NATS; its
 * organization's watchers hear it come online, go offline when killed and get revoked; another
 * organization's watcher hears nothing of it.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestController, type TestController } from '../helpers/controller';
import { spawnAgent, type Proc } from '../helpers/processes';
import { SHARED_NATS, dropNatsNamespace, natsPrefix, until, type Org } from '../agents/helpers';
import { watch } from './helpers';

const prefix = natsPrefix();
let c: TestController;
let org: Org;
let other: Org;
let agent: Proc | null = null;

beforeAll(async () => {
  c = await startTestController({
    settings: { 'agents.heartbeat_seconds': 1, 'agents.offline_after_seconds': 3 },
    config: { natsUrl: SHARED_NATS, natsPrefix: prefix },
  });
  org = await c.createOrgUser(['org_admin']);
  other = await c.createOrgUser(['org_admin']);
});

afterAll(async () => {
  await agent?.kill('SIGKILL');
  await c?.close();
  await dropNatsNamespace(SHARED_NATS, prefix);
});

describe('agent events on /api/live', () => {
  it("announce online, offline (killed) and revoked, with the site, to the agent's organization only", { timeout: 180_000 }, async () => {
    const site = await c.request('POST', '/api/sites', { token: org.token, body: { name: 'Edge A' } });
    expect(site.status).toBe(201);
    const mine = await watch(c, org.token);
    const theirs = await watch(c, other.token);

    const created = await c.request('POST', '/api/agents', { token: org.token, body: { name: 'edge-a-1', site_id: site.body.id } });
    expect(created.status).toBe(201);
    const id = created.body.id;
    agent = spawnAgent({
      NATS_URL: SHARED_NATS,
      SWITCHBOARD_URL: c.url,
      SWITCHBOARD_ENROLL_TOKEN: created.body.enrollment_token,
      SWITCHBOARD_AGENT_STATE_DIR: mkdtempSync(join(tmpdir(), 'sb-agent-live-')),
    });
    const online = await until('online event', () => mine.events.find((e) => e.type === 'agent' && e.id === id && e.status === 'online'), 90_000);
    expect(online).toMatchObject({ name: 'edge-a-1', site_id: site.body.id });
    expect(online.last_seen_at).toEqual(expect.any(String));
    expect(online.org_id).toBeUndefined();

    await agent.kill('SIGKILL');
    agent = null;
    const after = mine.events.indexOf(online);
    const offline = await until(
      'offline event',
      () => mine.events.find((e, i) => i > after && e.type === 'agent' && e.id === id && e.status === 'offline'),
      60_000,
    );
    expect(offline.site_id).toBe(site.body.id);
    expect(['online', 'degraded']).toContain(offline.previous);

    expect((await c.request('DELETE', `/api/agents/${id}`, { token: org.token })).status).toBe(204);
    await until('revoked event', () => mine.events.find((e) => e.type === 'agent' && e.id === id && e.status === 'revoked'), 30_000);

    expect(theirs.events.filter((e) => e.type === 'agent')).toEqual([]);
    mine.close();
    theirs.close();
  });

  it('announce a new agent (offline until it enrolls) and its revocation', { timeout: 60_000 }, async () => {
    const w = await watch(c, org.token);
    const created = await c.request('POST', '/api/agents', { token: org.token, body: { name: 'edge-b-1', site_id: null } });
    expect(created.status).toBe(201);
    expect((await c.request('DELETE', `/api/agents/${created.body.id}`, { token: org.token })).status).toBe(204);
    const appeared = await until('new agent event', () => w.events.find((e) => e.type === 'agent' && e.id === created.body.id), 30_000);
    expect(appeared).toMatchObject({ status: expect.stringMatching(/^(offline|revoked)$/), previous: null });
    const revoked = await until(
      'revoked event of an agent never enrolled',
      () => w.events.find((e) => e.type === 'agent' && e.id === created.body.id && e.status === 'revoked'),
      30_000,
    );
    expect(revoked).toMatchObject({ name: 'edge-b-1', site_id: null });
    w.close();
  });
});
