import { exportSPKI, generateKeyPair, exportJWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestController, type TestController } from '../helpers/controller';
import { makeDevice, makeSite, type Org } from './helpers';

let tc: TestController;
let org: Org;
let other: Org;

beforeAll(async () => {
  tc = await startTestController({ settings: { 'agents.heartbeat_seconds': 1, 'agents.offline_after_seconds': 3 } });
  org = await tc.createOrgUser(['org_admin']);
  other = await tc.createOrgUser(['org_admin']);
});
afterAll(async () => tc?.close());

async function newKey() {
  const { publicKey } = await generateKeyPair('ES256', { extractable: true });
  return publicKey;
}

describe('POST /api/agents', () => {
  it('creates an agent with a one-time enrollment token, stored hashed', async () => {
    const res = await tc.request('POST', '/api/agents', { token: org.token, body: { name: 'edge-1', site_id: null } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'edge-1',
      site_id: null,
      pool: 'default',
      status: 'offline',
      enrolled: false,
      active_jobs: 0,
      completed_jobs: 0,
      failed_jobs: 0,
    });
    expect(res.body.enrollment_token).toMatch(/^sbe_[A-Za-z0-9_-]{40,}$/);
    expect(new Date(res.body.enrollment_expires_at).getTime()).toBeGreaterThan(Date.now());
    const row = await tc.db('agents').where({ id: res.body.id }).first();
    expect(row.enrollment_token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(row)).not.toContain(res.body.enrollment_token);
  });

  it('refuses a duplicate name, an unknown site, bad bodies and callers without agents.manage', async () => {
    expect((await tc.request('POST', '/api/agents', { token: org.token, body: { name: 'EDGE-1', site_id: null } })).status).toBe(409);
    const site = await makeSite(tc, other);
    const foreignSite = await tc.request('POST', '/api/agents', { token: org.token, body: { name: 'x', site_id: site.id } });
    expect(foreignSite.status).toBe(400);
    expect(foreignSite.body.code).toBe('UNKNOWN_SITE');
    expect((await tc.request('POST', '/api/agents', { token: org.token, body: { name: '', site_id: null } })).status).toBe(400);
    expect((await tc.request('POST', '/api/agents', { token: org.token, body: { name: 'y' } })).status).toBe(400);
    expect((await tc.request('POST', '/api/agents', { token: org.token, body: { name: 'y', site_id: 'nope' } })).status).toBe(400);
    expect((await tc.request('POST', '/api/agents', { token: org.token, body: { name: 'y', site_id: null, extra: 1 } })).status).toBe(400);
    const operator = await tc.createOrgUser(['operator']);
    expect((await tc.request('POST', '/api/agents', { token: operator.token, body: { name: 'z', site_id: null } })).status).toBe(403);
    expect((await tc.request('GET', '/api/agents', { token: operator.token })).status).toBe(200);
    expect((await tc.request('GET', '/api/agents')).status).toBe(401);
  });
});

describe('POST /api/agents/enroll', () => {
  it('redeems a token once, with a JWK or a PEM public key', async () => {
    const created = await tc.request('POST', '/api/agents', { token: org.token, body: { name: 'jwk-agent', site_id: null } });
    const jwk = await exportJWK(await newKey());
    const body = { token: created.body.enrollment_token, public_key: jwk, version: '1.2.3', capabilities: ['job:backup'] };
    const res = await tc.request('POST', '/api/agents/enroll', { body });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ agent_id: created.body.id, org_id: org.orgId, pool: 'default', site_id: null });
    expect(res.body.nats.jobs_subject).toBe(`sb.jobs.${org.orgId}.default`);
    expect(res.body.nats.results_subject).toBe(`sb.results.${created.body.id}`);
    expect(res.body.controller_key).toMatchObject({ kty: 'OKP', crv: 'Ed25519' });
    expect(res.body.controller_key.d).toBeUndefined();

    const again = await tc.request('POST', '/api/agents/enroll', { body });
    expect(again.status).toBe(401);
    expect(again.body.code).toBe('ENROLLMENT_TOKEN_INVALID');

    const pemAgent = await tc.request('POST', '/api/agents', { token: org.token, body: { name: 'pem-agent', site_id: null } });
    const pem = await exportSPKI(await newKey());
    const pemRes = await tc.request('POST', '/api/agents/enroll', { body: { ...body, token: pemAgent.body.enrollment_token, public_key: pem } });
    expect(pemRes.status).toBe(200);
    const list = await tc.request('GET', '/api/agents', { token: org.token });
    const item = list.body.agents.find((a: any) => a.id === created.body.id);
    expect(item).toMatchObject({ enrolled: true, version: '1.2.3', capabilities: ['job:backup'], status: 'offline', last_seen_at: null });
  });

  it('refuses an expired token, a bad key and an unknown token', async () => {
    const created = await tc.request('POST', '/api/agents', { token: org.token, body: { name: 'late', site_id: null } });
    const jwk = await exportJWK(await newKey());
    await tc
      .db('agents')
      .where({ id: created.body.id })
      .update({ enrollment_expires_at: new Date(Date.now() - 1000) });
    const expired = await tc.request('POST', '/api/agents/enroll', {
      body: { token: created.body.enrollment_token, public_key: jwk, version: '1', capabilities: [] },
    });
    expect(expired.status).toBe(401);
    expect(expired.body.error).toMatch(/expired/);

    const fresh = await tc.request('POST', '/api/agents', { token: org.token, body: { name: 'badkey', site_id: null } });
    const rsa = await generateKeyPair('RS256', { extractable: true });
    for (const public_key of [
      await exportJWK(rsa.publicKey),
      'not a key',
      { kty: 'EC', crv: 'P-256', x: 'AAAA', y: 'AAAA' },
      await exportJWK(rsa.privateKey),
    ]) {
      const res = await tc.request('POST', '/api/agents/enroll', {
        body: { token: fresh.body.enrollment_token, public_key, version: '1', capabilities: [] },
      });
      expect(res.status).toBe(400);
      expect(res.body.code).toMatch(/AGENT_PUBLIC_KEY_INVALID|VALIDATION_FAILED/);
    }
    // A refused key does not spend the token.
    expect(
      (
        await tc.request('POST', '/api/agents/enroll', {
          body: { token: fresh.body.enrollment_token, public_key: jwk, version: '1', capabilities: [] },
        })
      ).status,
    ).toBe(200);

    expect(
      (await tc.request('POST', '/api/agents/enroll', { body: { token: 'sbe_nope', public_key: jwk, version: '1', capabilities: [] } })).status,
    ).toBe(401);
    expect((await tc.request('POST', '/api/agents/enroll', { body: { token: 'x', public_key: jwk } })).status).toBe(400);
  });
});

describe('DELETE /api/agents/:id', () => {
  it('revokes at once; other organizations get 404 and see nothing', async () => {
    const created = await tc.request('POST', '/api/agents', { token: org.token, body: { name: 'doomed', site_id: null } });
    expect((await tc.request('DELETE', `/api/agents/${created.body.id}`, { token: other.token })).status).toBe(404);
    const otherList = await tc.request('GET', '/api/agents', { token: other.token });
    expect(otherList.body.agents.map((a: any) => a.id)).not.toContain(created.body.id);

    expect((await tc.request('DELETE', `/api/agents/${created.body.id}`, { token: org.token })).status).toBe(204);
    expect((await tc.request('DELETE', `/api/agents/${created.body.id}`, { token: org.token })).status).toBe(404);
    expect((await tc.request('DELETE', '/api/agents/not-a-uuid', { token: org.token })).status).toBe(400);
    const list = await tc.request('GET', '/api/agents', { token: org.token });
    expect(list.body.agents.map((a: any) => a.id)).not.toContain(created.body.id);
    // Its token died with it; the name can be reused.
    const jwk = await exportJWK(await newKey());
    expect(
      (
        await tc.request('POST', '/api/agents/enroll', {
          body: { token: created.body.enrollment_token, public_key: jwk, version: '1', capabilities: [] },
        })
      ).status,
    ).toBe(401);
    expect((await tc.request('POST', '/api/agents', { token: org.token, body: { name: 'doomed', site_id: null } })).status).toBe(201);
  });
});

describe('agents and site deletion', () => {
  it('a live agent keeps its site from being deleted; a revoked one does not', async () => {
    const site = await makeSite(tc, org);
    const agent = await tc.request('POST', '/api/agents', { token: org.token, body: { name: 'holder', site_id: site.id } });
    const refused = await tc.request('DELETE', `/api/sites/${site.id}`, { token: org.token });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatch(/agents/);
    expect((await tc.request('DELETE', `/api/agents/${agent.body.id}`, { token: org.token })).status).toBe(204);
    expect((await tc.request('DELETE', `/api/sites/${site.id}`, { token: org.token })).status).toBe(204);
  });
});

describe('GET /api/sites/:id/health', () => {
  it('shows the site agents and device reachability from recent job outcomes', async () => {
    const site = await makeSite(tc, org);
    const empty = await tc.request('GET', `/api/sites/${site.id}/health`, { token: org.token });
    expect(empty.status).toBe(200);
    expect(empty.body).toMatchObject({ site_id: site.id, name: site.name, pool: 'default', status: 'no_agents', agents: [], devices: { total: 0 } });

    const agent = await tc.request('POST', '/api/agents', { token: org.token, body: { name: 'site-agent', site_id: site.id } });
    const [a, b, c] = [
      await makeDevice(tc, org, { site_id: site.id }),
      await makeDevice(tc, org, { site_id: site.id }),
      await makeDevice(tc, org, { site_id: site.id }),
    ];
    const now = new Date();
    await tc.db('jobs').insert([
      { org_id: org.orgId, kind: 'backup', device_id: a, status: 'succeeded', deadline_at: now, finished_at: now },
      { org_id: org.orgId, kind: 'backup', device_id: b, status: 'succeeded', deadline_at: now, finished_at: new Date(now.getTime() - 60_000) },
      { org_id: org.orgId, kind: 'test_credential', device_id: b, status: 'failed', error: 'connection refused', deadline_at: now, finished_at: now },
    ]);
    void c;
    const health = await tc.request('GET', `/api/sites/${site.id}/health`, { token: org.token });
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({
      pool: site.id,
      status: 'down',
      online_agents: 0,
      devices: { total: 3, reachable: 1, unreachable: 1, unknown: 1 },
    });
    expect(health.body.agents.map((x: any) => x.id)).toEqual([agent.body.id]);
    expect(health.body.unreachable_devices).toEqual([expect.objectContaining({ id: b, error: 'connection refused', kind: 'test_credential' })]);

    expect((await tc.request('GET', `/api/sites/${site.id}/health`, { token: other.token })).status).toBe(404);
    expect((await tc.request('GET', `/api/sites/00000000-0000-4000-8000-000000000000/health`, { token: org.token })).status).toBe(404);
    expect((await tc.request('GET', `/api/sites/${site.id}/health`)).status).toBe(401);
  });
});
