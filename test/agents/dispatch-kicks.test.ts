/**
 * When a job ends, the engine dispatches again only if another job of the same device is queued
 * behind it (markFinalMany reports it): a stream of results for distinct devices costs no
 * dispatch passes, and a job waiting for its device starts as soon as the device is free, not
 * at the next sweep. The sweep is set to a minute here, so only those kicks can dispatch.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestController, type TestController } from '../helpers/controller';
import { startSshDevice, type SimSshDevice } from '../sim/ssh';
import { enrollAgent, makeDevice, makeProfile, startAgent, type Org } from './helpers';

const PASSWORD = 'kick-Pa55word';
let tc: TestController;
let org: Org;
let sim: SimSshDevice;
let profileId: string;
let agent: Awaited<ReturnType<typeof startAgent>>;
/** Dispatch passes: each reads the dispatch candidates once. */
let passes = 0;

beforeAll(async () => {
  tc = await startTestController({ config: { jobs: { sweepIntervalMs: 60_000 } } });
  tc.db.on('query', (q: { sql: string }) => {
    if (/from "jobs" as "j" where "j"\."status" = /.test(q.sql)) passes += 1;
  });
  org = await tc.createOrgUser(['org_admin']);
  sim = await startSshDevice({ hostname: 'kick-1', password: PASSWORD });
  profileId = await makeProfile(tc, org, { ssh_port: sim.port, password: PASSWORD });
  const { identity } = await enrollAgent(tc, org, { name: 'kicks' });
  agent = await startAgent(tc, identity, { concurrency: 8 });
});

afterAll(async () => {
  await agent?.stop();
  await sim?.close();
  await tc?.close();
});

const check = (deviceId: string) => ({ orgId: org.orgId, kind: 'test_credential' as const, deviceId, params: {}, deadlineMs: 30_000 });

describe('dispatch after a job ends', () => {
  it('runs no dispatch pass for results whose devices have nothing queued', async () => {
    const devices = [];
    for (let i = 0; i < 6; i++) devices.push(await makeDevice(tc, org, { profile_id: profileId, name: `kick-free-${i}` }));
    const before = passes;
    const ids = await tc.services.jobs.submit(devices.map(check));
    const outcomes = await tc.services.jobs.wait(ids, 30_000);
    expect(outcomes.map((o) => o.status)).toEqual(ids.map(() => 'succeeded'));
    await new Promise((r) => setTimeout(r, 100)); // a kick runs 20 ms after a result
    expect(passes - before).toBe(1); // the submission's own pass dispatched all six
  });

  it('dispatches a job queued behind another of its device as soon as that one ends', async () => {
    const deviceId = await makeDevice(tc, org, { profile_id: profileId, name: 'kick-busy' });
    const before = passes;
    const ids = await tc.services.jobs.submit([check(deviceId), check(deviceId), check(deviceId)]);
    // Within 30 s, while the sweep comes once a minute: each was dispatched by its predecessor's end.
    const outcomes = await tc.services.jobs.wait(ids, 30_000);
    expect(outcomes.map((o) => o.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    await new Promise((r) => setTimeout(r, 100));
    expect(passes - before).toBe(3); // the submission's, then one after each of the first two ended
    const rows = await tc.db('jobs').whereIn('id', ids).orderBy('started_at').select('started_at', 'finished_at');
    for (let i = 1; i < rows.length; i++) expect(rows[i].started_at.getTime()).toBeGreaterThanOrEqual(rows[i - 1].finished_at.getTime());
  });
});
