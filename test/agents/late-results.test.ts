/**
 * Deadlines against a controller crash, with real processes: a deadline that passes while a dead
 * controller held the results does not fail the devices (the results come back and are
 * recorded); a result that arrives after its job was failed at the deadline is logged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SLOWER, cleanUp, install, jobsIn, setUp, sshDevices, unackedResults, type Installation } from './crash-helpers';
import { makeSite, until } from './helpers';

beforeAll(setUp);
afterAll(cleanUp);

/**
 * One installation (controller, two agents of the default pool) for both tests, started by the
 * first that runs: three process starts fewer. The second test then runs on the controller the
 * first restarted, with agents that lived through it: it waits for both online, collects only
 * its own device (a site of its own, which having no agents is served by the default pool), and
 * reads only the log lines written after it began. The crash test comes first: its snapshot
 * collects every device of the organization.
 */
let installation: Promise<Installation> | undefined;
async function installed(): Promise<Installation> {
  const inst = await (installation ??= install({ concurrency: 2 }));
  await until(
    'both agents online',
    async () => {
      const list = (await inst.api.request('GET', '/api/agents', { token: inst.org.token })).body.agents as { status: string }[];
      return list.length === 2 && list.every((a) => a.status === 'online');
    },
    60_000,
  );
  return inst;
}

describe('deadlines across a controller crash', () => {
  it(
    'a deadline that passes while the dead controller held the results: the results are recorded, not failed as "none started"',
    { timeout: 180_000 },
    async () => {
      const inst = await installed();
      const { api, org } = inst;
      await sshDevices(api, org, 4, 'short');
      const snap = (await api.request('POST', '/api/devices/snapshots', { token: org.token, body: { name: 'short deadline' } })).body.snapshot;
      const collectAt = Date.now();
      expect(
        (await api.request('POST', `/api/devices/snapshots/${snap.id}/collect`, { token: org.token, body: { timeout_seconds: 20 } })).status,
      ).toBe(202);
      // Frozen once the jobs went to the agents: their results reach a controller that cannot record them.
      await until('the jobs to be dispatched', async () => (await jobsIn(inst, ['dispatched', 'running'])) > 0, 30_000, 50);
      inst.controller.signal('SIGSTOP');
      await until('the frozen controller to hold unacknowledged results', async () => (await unackedResults(inst.prefix)) > 0, 60_000, 100);
      // The controller stays down past the deadline: only then does a new one come up.
      await until('the deadline to pass', () => Date.now() > collectAt + 22_000, 40_000, 200);
      await inst.controller.kill('SIGKILL');
      inst.controller = await inst.controller.restart();
      const done = await until(
        'the snapshot to finish',
        async () => {
          const s = (await inst.api.request('GET', `/api/devices/snapshots/${snap.id}`, { token: org.token })).body.snapshot;
          return s.status === 'collecting' ? null : s;
        },
        60_000,
        100,
      );
      const backups = (await inst.api.request('GET', `/api/devices/snapshots/${snap.id}/backups`, { token: org.token })).body.backups as {
        status: string;
        error_message: string | null;
      }[];
      expect(backups.map((b) => b.error_message ?? '').join('\n')).not.toMatch(/none started/);
      expect(done, JSON.stringify(backups)).toMatchObject({ total_devices: 4, successful_devices: 4, failed_devices: 0 });
    },
  );

  it('a result that arrives after its job failed at the deadline is logged with its job and device', { timeout: 180_000 }, async () => {
    const inst = await installed();
    const { api, org } = inst;
    const logFrom = inst.controller.output().length;
    const logged = () => inst.controller.output().slice(logFrom);
    const site = await makeSite(api, org, 'late');
    const [deviceId] = await sshDevices(api, org, 1, 'late', SLOWER, site.id);
    // Both agents frozen once the job started: its deadline passes with no result.
    const snap = (
      await api.request('POST', '/api/devices/snapshots', { token: org.token, body: { name: 'late result', device_filter: { site_id: site.id } } })
    ).body.snapshot;
    expect((await api.request('POST', `/api/devices/snapshots/${snap.id}/collect`, { token: org.token, body: { timeout_seconds: 6 } })).status).toBe(
      202,
    );
    await until('the job to start', async () => (await jobsIn(inst, ['running'])) > 0, 60_000, 50);
    inst.agents.forEach((a) => a.signal('SIGSTOP'));
    const failed = await until(
      'the snapshot to end at its deadline',
      async () => {
        const s = (await api.request('GET', `/api/devices/snapshots/${snap.id}`, { token: org.token })).body.snapshot;
        return s.status === 'collecting' ? null : s;
      },
      60_000,
      200,
    );
    expect(failed.failed_devices).toBe(1);
    inst.agents.forEach((a) => a.signal('SIGCONT'));
    await until('the late result to be logged', async () => /a result arrived after its job was finalised/.test(logged()), 60_000, 200);
    const line = logged()
      .split('\n')
      .find((l) => l.includes('a result arrived after its job was finalised'))!;
    expect(line).toContain(deviceId);
    expect(JSON.parse(line)).toMatchObject({ device: deviceId, kind: 'backup', job_status: 'failed' });
  });
});
