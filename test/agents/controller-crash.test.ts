/**
 * A controller that dies holding agent results: the controller (`npm run controller`) is frozen
 * (SIGSTOP) until NATS has handed it results it can no longer acknowledge, then SIGKILLed and
 * started again. The results it held come back after the short results ack wait, not the old
 * fixed minute, so the restarted controller records every device well within it, each once.
 * Real processes throughout: controller, agents, NATS, SSH and gNMI simulators.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGnmiTarget, type GnmiTarget } from '../sim/gnmi/target';
import {
  METRICS_TOKEN,
  OLD_WAIT_MS,
  cleanUp,
  closers,
  crashHoldingResults,
  install,
  setUp,
  sshDevices,
  unackedResults,
  type Installation,
} from './crash-helpers';
import { makeProfile, until } from './helpers';

const targets: GnmiTarget[] = [];
beforeAll(setUp);
afterAll(cleanUp);
closers.push(async () => void (await Promise.all(targets.map((t) => t.close()))));
/**
 * One installation (controller, two agents) for both tests, started by the first that runs: each
 * test crashes the controller itself, and the second one's crash is as real on the controller the
 * first restarted (its held results all acknowledged by then). Three process starts fewer. The
 * snapshot test comes first: a snapshot collects every device of the organization, and the
 * deployment test's devices come after it (the deployment names its own).
 */
let installation: Promise<Installation> | undefined;
const installed = () => (installation ??= install({ concurrency: 2 }));

describe('a controller killed while holding agent results', () => {
  it('mid-snapshot: the restarted controller records every device within seconds, each once', { timeout: 240_000 }, async () => {
    const inst = await installed();
    const { api, org } = inst;
    const deviceIds = await sshDevices(api, org, 10, 'snap');
    const snap = (await api.request('POST', '/api/devices/snapshots', { token: org.token, body: { name: 'through a crash' } })).body.snapshot;
    const started = await api.request('POST', `/api/devices/snapshots/${snap.id}/collect`, { token: org.token, body: { timeout_seconds: 600 } });
    expect(started.status).toBe(202);
    await until(
      'a first device recorded',
      async () => (await api.request('GET', `/api/devices/snapshots/${snap.id}`, { token: org.token })).body.snapshot.successful_devices >= 1,
      60_000,
      100,
    );

    const upAt = await crashHoldingResults(inst);
    const done = await until(
      'the snapshot to finish',
      async () => {
        const s = (await inst.api.request('GET', `/api/devices/snapshots/${snap.id}`, { token: org.token })).body.snapshot;
        return s.status === 'collecting' ? null : s;
      },
      120_000,
      100,
    );
    const tookMs = Date.now() - upAt;
    expect(done).toMatchObject({ status: 'completed', total_devices: 10, successful_devices: 10, failed_devices: 0 });
    // What the dead controller held came back after the results ack wait, not the old minute.
    expect(tookMs).toBeLessThan(OLD_WAIT_MS / 2);
    // Every event the dead controller held is acknowledged in the end (redelivered copies included).
    await until('every held event acknowledged', async () => (await unackedResults(inst.prefix)) === 0, 30_000, 200);
    for (const id of deviceIds) {
      const versions = (await api.request('GET', `/api/config/devices/${id}/configs`, { token: org.token })).body;
      expect(versions.total, `versions of ${id}`).toBe(1);
    }
    // The stream depths are in /metrics.
    const metrics = await fetch(`${inst.controller.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }).then((r) => r.text());
    expect(metrics).toMatch(/switchboard_nats_stream_messages\{stream="results"\} 0/);
    expect(metrics).toMatch(/switchboard_nats_results_unrecorded\{state="unacked"\} 0/);
  });

  it('mid-deployment: every device deployed once and the deployment completes on the restarted controller', { timeout: 240_000 }, async () => {
    const inst = await installed();
    const { org } = inst;
    const deviceIds: string[] = [];
    for (let i = 0; i < 6; i++) {
      const target = await startGnmiTarget({ initialTree: { system: { config: { hostname: `old-${i}` } } }, faults: { delayMs: 300 } });
      targets.push(target);
      const profile = await makeProfile(inst.api, org, { gnmi_port: target.port, automation_transport: 'gnmi' });
      const res = await inst.api.request('POST', '/api/devices', {
        token: org.token,
        body: { name: `gn-${i}`, host: target.host, device_type: 'vendor_eos', profile_id: profile },
      });
      expect(res.status).toBe(201);
      deviceIds.push(res.body.id);
    }
    const tpl = await inst.api.request('POST', '/api/config/templates', {
      token: org.token,
      body: {
        name: 'hostname',
        platform: 'openconfig-gnmi',
        config_format: 'json',
        target_path: '/system/config',
        source: '{"hostname": "{{ hostname }}"}',
      },
    });
    expect(tpl.status).toBe(201);
    const stack = await inst.api.request('POST', '/api/config/stacks', {
      token: org.token,
      body: { name: 'crash', services: [{ template_id: tpl.body.id, order: 0, variables: { hostname: 'after-crash' } }] },
    });
    expect(stack.status).toBe(201);
    const dep = await inst.api.request('POST', '/api/config/deployments', {
      token: org.token,
      body: { stack_id: stack.body.id, name: 'through a crash', target_devices: deviceIds.map((device_id) => ({ device_id })) },
    });
    expect(dep.status, dep.text).toBe(201);
    // Frozen while a device's backup is stored and its change under way (each gNMI call takes
    // 300 ms): that job's result comes while the controller is frozen, whatever the timing of the
    // others (a job yet to store its backup waits for the controller, and sends no result).
    await until(
      'a device changing after its backup was stored',
      async () => {
        const d = (await inst.api.request('GET', `/api/config/deployments/${dep.body.id}`, { token: org.token })).body;
        return (d.devices as { status: string; backup_config_id: string | null }[]).some((x) => x.status === 'running' && x.backup_config_id);
      },
      60_000,
      50,
    );

    const upAt = await crashHoldingResults(inst);
    const done = await until(
      'the deployment to end',
      async () => {
        const d = (await inst.api.request('GET', `/api/config/deployments/${dep.body.id}`, { token: org.token })).body;
        return ['completed', 'failed', 'rolled_back'].includes(d.status) ? d : null;
      },
      120_000,
      100,
    );
    expect(Date.now() - upAt).toBeLessThan(OLD_WAIT_MS / 2);
    expect(done.status, JSON.stringify(done.devices)).toBe('completed');
    for (const target of targets) expect(JSON.stringify(target.tree())).toContain('after-crash');
    // Each device changed once: one deploy job per device.
    const jobs = await inst.api.request('GET', `/api/config/deployments/${dep.body.id}`, { token: org.token });
    expect((jobs.body.devices as unknown[]).length).toBe(6);
  });
});
