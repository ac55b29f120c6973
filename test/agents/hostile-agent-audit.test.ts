/**
 * A compromised site: the attacker holds one enrolled agent of organization A (its key, its NATS
 * link) and publishes whatever NATS lets that agent publish. What it sends must never change
 * another organization's jobs, nor stop the controller from recording the other agents' events
 * and requests. Real controller, real PostgreSQL, real NATS JetStream; the agents are enrolled
 * and never started, so their jobs wait in NATS while the test speaks for them.
 */
import { randomUUID } from 'node:crypto';
import type { NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentsStore } from '../../controller/src/agents/store';
import { natsAgentLink } from '../../agent/src/nats-link';
import type { AgentIdentity } from '../../agent/src/identity';
import {
  AGENT_SIGN_ALG,
  CONTROLLER_SIGN_ALG,
  importAgentPrivateKey,
  importControllerPublicKey,
  signJson,
  signJsonDetached,
  signTextDetached,
  verifyJson,
  type AnyKey,
} from '../../shared/src/jobs/crypto';
import type { AgentLink } from '../../shared/src/jobs/link';
import { PROTOCOL_VERSION } from '../../shared/src/jobs/messages';
import type { NatsJobTransport } from '../../controller/src/jobs/nats-transport';
import { startTestController, type TestController } from '../helpers/controller';
import {
  SHARED_NATS,
  dropNatsNamespace,
  enrollAgent,
  jobRow,
  makeDevice,
  makeProfile,
  makeSite,
  natsPrefix,
  resultsToken,
  until,
  type Org,
} from './helpers';

interface Speaker {
  identity: AgentIdentity;
  id: string;
  sign: AnyKey;
  link: AgentLink;
}

const prefix = natsPrefix();
let tc: TestController;
let orgA: Org;
let orgB: Org;
let evil: Speaker;
let victim: Speaker;
let profileA: string;
let profileB: string;
const links: AgentLink[] = [];

async function speaker(org: Org, name: string, siteId: string | null = null): Promise<Speaker> {
  const { identity } = await enrollAgent(tc, org, { name, site_id: siteId });
  const link = await natsAgentLink(SHARED_NATS, identity);
  links.push(link);
  return { identity, id: identity.agent_id, sign: (await importAgentPrivateKey(identity.private_jwk)).sign, link };
}

beforeAll(async () => {
  tc = await startTestController({ config: { natsUrl: SHARED_NATS, natsPrefix: prefix, jobs: { sweepIntervalMs: 200 } } });
  orgA = await tc.createOrgUser(['org_admin']);
  orgB = await tc.createOrgUser(['org_admin']);
  evil = await speaker(orgA, 'compromised');
  victim = await speaker(orgB, 'honest');
  profileA = await makeProfile(tc, orgA, { ssh_port: 22, password: 'unused-secret-a' });
  profileB = await makeProfile(tc, orgB, { ssh_port: 22, password: 'unused-secret-b' });
});

afterAll(async () => {
  for (const link of links) await link.close().catch(() => undefined);
  await tc?.close();
  await dropNatsNamespace(SHARED_NATS, prefix);
});

/** One dispatched test_credential job of a new device of `org` (in the site `siteId`, when given). */
async function dispatchedJob(org: Org, profileId: string, siteId: string | null = null): Promise<string> {
  const deviceId = await makeDevice(tc, org, { profile_id: profileId, site_id: siteId });
  const [jobId] = await tc.services.jobs.submit([{ orgId: org.orgId, kind: 'test_credential', deviceId, params: {}, deadlineMs: 120_000 }]);
  await until('the job to be dispatched', async () => (await jobRow(tc, jobId)).status === 'dispatched');
  return jobId;
}

const logLine = (text: string, at = new Date().toISOString()) => ({ at, level: 'info', text });

async function progress(s: Speaker, jobId: string, lines: ReturnType<typeof logLine>[], startedAt?: string, attempt = 1): Promise<void> {
  const event = {
    v: PROTOCOL_VERSION,
    type: 'progress',
    agent_id: s.id,
    started: startedAt ? [{ job_id: jobId, attempt, at: startedAt }] : [],
    logs: lines.length > 0 ? [{ job_id: jobId, attempt, lines }] : [],
  };
  await s.link.publish(await signJsonDetached(event, s.sign, AGENT_SIGN_ALG, s.id), randomUUID());
}

const healthy = async () => (await tc.request('GET', '/healthz')).status === 200;

describe('a compromised agent of organization A', () => {
  it("cannot put another organization's job back in the queue by naming a revoked agent on an unsigned event", async () => {
    // A revoked agent of the attacker's own organization (its id is all the attacker needs).
    const { identity: gone } = await enrollAgent(tc, orgA, { name: 'revoked-long-ago' });
    expect((await tc.request('DELETE', `/api/agents/${gone.agent_id}`, { token: orgA.token })).status).toBe(204);
    const theirs = await dispatchedJob(orgB, profileB);
    const ours = await dispatchedJob(orgA, profileA);
    // Signed with the attacker's own key but naming the revoked agent: the signature is not the revoked agent's.
    const forged = {
      v: PROTOCOL_VERSION,
      type: 'results',
      agent_id: gone.agent_id,
      results: [
        {
          job_id: theirs,
          attempt: 1,
          status: 'failed',
          error: 'x',
          result: null,
          started_at: new Date().toISOString(),
          finished_at: new Date().toISOString(),
          logs: [],
          host_key: null,
          gnmi_cert: null,
        },
      ],
    };
    await evil.link.publish(await signJsonDetached(forged, evil.sign, AGENT_SIGN_ALG, gone.agent_id), randomUUID());
    // Then a genuine result of its own, recorded once the forged event has been read.
    await evil.link.publish(await resultsToken(evil.sign, evil.id, [{ job_id: ours }]), randomUUID());
    const [outcome] = await tc.services.jobs.wait([ours], 30_000);
    expect(outcome.status).toBe('succeeded');
    // Organization B's job was never handed back (nor sent again at a new attempt).
    expect(await jobRow(tc, theirs)).toMatchObject({ status: 'dispatched', attempt: 1 });
  });

  it("cannot stop the recording of other organizations' events with log lines PostgreSQL refuses", async () => {
    const own = await dispatchedJob(orgA, profileA);
    const theirs = await dispatchedJob(orgB, profileB);
    // A NUL character and a day that does not exist: both fit the schema and JSON, neither fits PostgreSQL.
    await progress(evil, own, [logLine('before\u0000after')]);
    await progress(evil, own, [logLine('no such day', '2026-02-31T00:00:00.000Z')]);
    await progress(evil, own, [], '2026-02-31T00:00:00.000Z');
    // An attempt no PostgreSQL integer holds.
    await progress(evil, own, [logLine('attempt 2^40')], undefined, 2 ** 40);
    await victim.link.publish(await resultsToken(victim.sign, victim.id, [{ job_id: theirs }]), randomUUID());
    const [outcome] = await tc.services.jobs.wait([theirs], 30_000);
    expect(outcome).toMatchObject({ status: 'succeeded', agentId: victim.id });
    expect(await healthy()).toBe(true);
  }, 60_000);

  it('cannot crash the controller with a result nested 200,000 levels deep', async () => {
    const own = await dispatchedJob(orgA, profileA);
    const depth = 200_000;
    const now = new Date().toISOString();
    const event = {
      v: PROTOCOL_VERSION,
      type: 'results',
      agent_id: evil.id,
      results: [
        {
          job_id: own,
          attempt: 1,
          status: 'succeeded',
          error: null,
          result: { ok: true, message: 'deep', transports: [], extra: '@DEEP@' },
          started_at: now,
          finished_at: now,
          logs: [],
          host_key: null,
          gnmi_cert: null,
        },
      ],
    };
    // JSON.stringify could not write it: the text is made as an attacker would, then signed.
    const json = JSON.stringify(event).replace('"@DEEP@"', '['.repeat(depth) + ']'.repeat(depth));
    const token = signTextDetached(json, evil.sign, AGENT_SIGN_ALG, evil.id);
    await evil.link.publish(token, randomUUID());
    const [outcome] = await tc.services.jobs.wait([own], 60_000);
    expect(outcome.status).toBe('failed');
    expect(await healthy()).toBe(true);
  }, 90_000);

  it('stores no control characters that fake log lines or terminal escapes in the lines operators read', async () => {
    const own = await dispatchedJob(orgA, profileA);
    await progress(evil, own, [logLine('ok\r2026-01-01T00:00:00Z error: admin password is hunter2\u001b[2K\u0007'), logLine('marker')]);
    const rows = await until('the lines to be recorded', async () => {
      const found = await tc.db('job_logs').where({ job_id: own }).orderBy('id').select('text');
      return found.length === 2 ? found : null;
    });
    for (const { text } of rows) expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    expect(rows[0].text).toContain('error: admin password is hunter2');
  });

  it('cannot grow the heap without bound with a flood of requests; an honest agent is answered afterwards', async () => {
    // Padded: each about 14 KB.
    const beat = (s: Speaker, padding: number, at = new Date()) =>
      heartbeat(s, at, { version: 'x'.repeat(100), capabilities: Array.from({ length: padding }, () => 'c'.repeat(100)) });
    const nc = (evil.link as AgentLink & { connection: NatsConnection }).connection;
    const reply = `${evil.identity.nats.inbox_prefix ?? `_INBOX.${evil.id}`}.flood`;
    const transport = tc.services.jobEngine.transport as NatsJobTransport;
    const droppedBefore = transport.requestsDropped;
    // 40,000 of them (560 MB), never waiting for an answer: the controller runs with a 256 MiB heap,
    // and held every one of them until answered (2 GB). Each is signed for its own millisecond: a
    // copy of one is refused at once (it is not later than the last taken), these are recorded.
    const start = Date.now();
    for (let i = 0; i < 40_000; i++) {
      const data = new TextEncoder().encode(await beat(evil, 100, new Date(start + i))); // 14 KB, a valid heartbeat
      nc.publish(evil.identity.nats.heartbeat_subject, data, { reply });
      if (i % 1000 === 999) await nc.flush();
    }
    await nc.flush();
    // The honest agent of organization B is answered (it asks again while none answers, as agents do).
    const answer = await until(
      'an answer to the honest heartbeat',
      async () => {
        const token = await victim.link.request(await beat(victim, 1), 5_000);
        return token ? ((await verifyJson(token, importControllerPublicKey(victim.identity.controller_key), CONTROLLER_SIGN_ALG)) as any) : null;
      },
      120_000,
    );
    expect(answer).toMatchObject({ agent_id: victim.id, ok: true, revoked: false });
    expect(await healthy()).toBe(true);
    // What the controller could not take at once it dropped (its agent asks again), instead of holding it.
    expect(transport.requestsDropped).toBeGreaterThan(droppedBefore);
  }, 180_000);

  it("cannot make other agents' pre-deployment backups fail with a backup PostgreSQL refuses", async () => {
    const request = (s: Speaker, text: string, jobId: string = randomUUID()) =>
      signJson(
        {
          v: PROTOCOL_VERSION,
          type: 'backup_store',
          agent_id: s.id,
          at: new Date().toISOString(),
          backups: [{ job_id: jobId, attempt: 1, backup: { text, format: 'cli', via: 'ssh' } }],
        },
        s.sign,
        AGENT_SIGN_ALG,
        s.id,
      );
    const ask = async (s: Speaker, text: string, jobId?: string) => {
      const answer = await s.link.request(await request(s, text, jobId), 10_000);
      return answer === null ? null : ((await verifyJson(answer, importControllerPublicKey(s.identity.controller_key), CONTROLLER_SIGN_ALG)) as any);
    };
    // A burst of poisoned requests around the honest agent's: they share its statements.
    const poisoned = Array.from({ length: 12 }, (_, i) =>
      i % 3 === 0 ? ask(evil, 'hostname x\u0000') : i % 3 === 1 ? ask(evil, 'hostname \ud800') : ask(evil, 'hostname z', 'not-a-job-id'),
    );
    const honest = ask(victim, 'hostname r1\n');
    const more = Array.from({ length: 12 }, () => ask(evil, 'hostname y\u0000'));
    const answer = await honest;
    // No such deploy job: a final answer, never "try again" because of somebody else's request.
    expect(answer).toMatchObject({ type: 'backup_stored', error: null, answers: [{ ok: false, error: 'the deploy job is not open' }] });
    expect(answer.answers[0].retry).toBeUndefined();
    for (const refused of await Promise.all([...poisoned, ...more])) expect(refused?.error).toMatch(/backup/);
  });
});

/** The controller's signed answer to a request `s` sends (null: none answered). */
async function ask(s: Speaker, token: string): Promise<any> {
  const answer = await s.link.request(token, 10_000);
  return answer === null ? null : verifyJson(answer, importControllerPublicKey(s.identity.controller_key), CONTROLLER_SIGN_ALG);
}

/** A heartbeat `s` signed for `at`, with `fields` over the usual ones. */
const heartbeat = (s: Speaker, at: Date, fields: Record<string, unknown> = {}) =>
  signJson(
    {
      v: PROTOCOL_VERSION,
      type: 'heartbeat',
      agent_id: s.id,
      at: at.toISOString(),
      version: 'test',
      capabilities: [],
      active_jobs: 0,
      max_jobs: 1,
      pending_events: 0,
      ...fields,
    },
    s.sign,
    AGENT_SIGN_ALG,
    s.id,
  );

const lastSeen = async (s: Speaker): Promise<Date | null> => (await tc.db('agents').where({ id: s.id }).first('last_seen_at')).last_seen_at;

describe('an agent of the pool, or anybody who read its signed messages on NATS', () => {
  it('cannot keep an agent online by sending one of its signed heartbeats again, nor one signed for another time', async () => {
    const s = await speaker(orgB, 'beating');
    const capturedAt = new Date();
    const captured = await heartbeat(s, capturedAt);
    expect(await ask(s, captured)).toMatchObject({ agent_id: s.id, ok: true, revoked: false });
    const seen = await lastSeen(s);
    // The same heartbeat again, one signed for a time before the last one taken, and ones signed
    // for more than 5 minutes from the controller's clock, either way (kept for replaying later).
    const replays = [
      captured,
      await heartbeat(s, new Date(Date.now() - 60_000)),
      await heartbeat(s, new Date(Date.now() + 6 * 60_000)),
      await heartbeat(s, new Date(Date.now() - 6 * 60_000)),
    ];
    for (const token of replays) expect(await ask(s, token)).toMatchObject({ agent_id: s.id, ok: false, revoked: false, error: expect.any(String) });
    expect(await lastSeen(s)).toEqual(seen);
    // The time of the last one taken is in the database: another controller (or this one after a
    // restart) records the copy with the same statement, which refuses it too.
    const beat = { version: 'test', capabilities: [], active_jobs: 0, max_jobs: 1, pending_events: 0 };
    expect(await new AgentsStore(tc.db).heartbeat(s.id, capturedAt, beat)).toBeNull();
    expect(await lastSeen(s)).toEqual(seen);
    // The agent's next heartbeat is taken as ever.
    expect(await ask(s, await heartbeat(s, new Date()))).toMatchObject({ ok: true });
    expect((await lastSeen(s))!.getTime()).toBeGreaterThan(seen!.getTime());
  });

  it("cannot add log lines or a start to its pool's finished jobs, to an earlier attempt, or to another agent's run", async () => {
    const engine = tc.services.jobEngine;
    const refusedBefore = engine.progressRefused;
    // A job the attacker finished itself.
    const finished = await dispatchedJob(orgA, profileA);
    await evil.link.publish(await resultsToken(evil.sign, evil.id, [{ job_id: finished }]), randomUUID());
    await tc.services.jobs.wait([finished], 30_000);
    // A job handed back and sent again, at attempt 2.
    const again = await dispatchedJob(orgA, profileA);
    expect(await engine.store.requeue(again, 1)).toBe(true);
    await engine.kick();
    await until('the job to be sent again', async () => {
      const row = await jobRow(tc, again);
      return row.status === 'dispatched' && row.attempt === 2;
    });
    // A job another agent of the pool runs.
    const peer = await speaker(orgA, 'peer');
    const theirs = await dispatchedJob(orgA, profileA);
    await progress(peer, theirs, [logLine('peer line')], new Date().toISOString());
    await until('the peer to run the job', async () => (await jobRow(tc, theirs)).agent_id === peer.id);

    await progress(evil, finished, [logLine('written after the end')], new Date().toISOString());
    await progress(evil, again, [logLine('written into attempt 1')], new Date().toISOString(), 1);
    await progress(evil, theirs, [logLine("written into the peer's run")]);
    // Then the peer's next line: once it is stored, every event before it has been read.
    await progress(peer, theirs, [logLine('marker')]);
    await until('the marker line to be stored', async () => (await tc.db('job_logs').where({ job_id: theirs, text: 'marker' }).first()) ?? null);

    const texts = async (jobId: string) => (await tc.db('job_logs').where({ job_id: jobId }).orderBy('id').select('text')).map((r) => r.text);
    expect(await texts(finished)).toEqual([]);
    expect(await texts(again)).toEqual([]);
    expect(await texts(theirs)).toEqual(['peer line', 'marker']);
    expect(await jobRow(tc, finished)).toMatchObject({ status: 'succeeded', agent_id: evil.id });
    expect(await jobRow(tc, again)).toMatchObject({ status: 'dispatched', attempt: 2, agent_id: null, started_at: null });
    expect(await jobRow(tc, theirs)).toMatchObject({ status: 'running', agent_id: peer.id });
    // Counted: two starts and three jobs' lines.
    expect(engine.progressRefused - refusedBefore).toBe(5);
  });

  it("learns nothing of another pool's jobs when it asks which jobs are still open", async () => {
    const site = await makeSite(tc, orgA);
    const local = await speaker(orgA, 'site agent', site.id);
    const jobId = await dispatchedJob(orgA, profileA, site.id);
    expect((await jobRow(tc, jobId)).pool).toBe(site.id);
    const openJobs = (s: Speaker) =>
      signJson(
        { v: PROTOCOL_VERSION, type: 'open_jobs', agent_id: s.id, at: new Date().toISOString(), jobs: [{ job_id: jobId, attempt: 1 }] },
        s.sign,
        AGENT_SIGN_ALG,
        s.id,
      );
    // The attacker's agent is of the default pool of the job's organization.
    expect(await ask(evil, await openJobs(evil))).toMatchObject({ type: 'open_jobs', ok: true, open: [] });
    expect(await ask(local, await openJobs(local))).toMatchObject({ type: 'open_jobs', ok: true, open: [jobId] });
  });
});
