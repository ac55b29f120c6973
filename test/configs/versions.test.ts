import { randomUUID } from 'node:crypto';
import { applyPatch } from 'diff';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobOutcome } from '../../controller/src/jobs/types';
import type { BackupMethodResult } from '../../shared/src/device/backup-method';
import { startTestController, type TestController } from '../helpers/controller';
import { inventoryUser, type InventoryUser } from '../inventory/helpers';

/**
 * Version storage, reads, notes and diffs through the real API and database. The versions are
 * recorded by the same 'backup' outcome recorder the job service calls, fed here with outcomes
 * as an agent reports them (end-to-end pulls through agents are in pull.test.ts).
 */
let c: TestController;
let u: InventoryUser;
let other: InventoryUser;
let deviceId: string;
let otherDeviceId: string;

const CONFIG_A = 'hostname r1\n!\ninterface Gi0/1\n description uplink\n!\nend\n';
const CONFIG_B = 'hostname r1\n!\ninterface Gi0/1\n description core uplink\n!\ninterface Gi0/2\n shutdown\n!\nend\n';

function outcomeOf(device: string, orgId: string, results: unknown[], extra: Partial<JobOutcome<'backup'>> = {}): JobOutcome<'backup'> {
  return {
    jobId: randomUUID(),
    kind: 'backup',
    orgId,
    deviceId: device,
    groupId: null,
    status: 'succeeded',
    error: null,
    result: {
      results: results as BackupMethodResult[],
      transcript: 'ssh netops@r1\nPassword: hunter2-secret\nr1#show running-config\nenable secret 5 $1$abcd$xyz\n',
    },
    agentId: null,
    startedAt: new Date(),
    finishedAt: new Date(),
    ...extra,
  };
}

async function record(device: string, orgId: string, results: unknown[], extra: Partial<JobOutcome<'backup'>> = {}) {
  const outcome = outcomeOf(device, orgId, results, extra);
  await c.db.transaction((trx) => c.services.configs!.recordBackup(outcome, trx));
  return outcome;
}
const cli = (text: string) => ({ method: 'cli', config: { text, format: 'cli', via: 'ssh' } });

beforeAll(async () => {
  c = await startTestController();
  u = await inventoryUser(c);
  other = await inventoryUser(c);
  const profile = await u.profile({ password: 'hunter2-secret' });
  deviceId = (await u.device(profile.id, { name: 'r1' })).id;
  otherDeviceId = (await other.device((await other.profile()).id, { name: 'r1' })).id;
  await record(deviceId, u.orgId, [cli(CONFIG_A)]); // v1
  await record(deviceId, u.orgId, [cli(CONFIG_A)]); // v2, unchanged
  await record(deviceId, u.orgId, [cli(CONFIG_B)]); // v3, changed
  await record(deviceId, u.orgId, [{ method: 'cli', error: 'Authentication failed for netops' }], {
    status: 'failed',
    error: 'Authentication failed for netops',
  }); // v4
});
afterAll(async () => c?.close());

describe('GET /api/config/devices/:device_id/configs', () => {
  it('lists versions newest first without config_text', async () => {
    const res = await u.as('GET', `/api/config/devices/${deviceId}/configs`);
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(4);
    expect(res.body.configs.map((v: any) => v.version)).toEqual([4, 3, 2, 1]);
    expect(res.body.configs[0]).not.toHaveProperty('config_text');
    expect(res.body.configs[0]).not.toHaveProperty('transcript');
    expect(res.body.configs[3]).toMatchObject({
      device_id: deviceId,
      config_format: 'cli',
      source: 'pull',
      pulled_via: 'ssh',
      status: 'success',
      error_message: null,
      snapshot_id: null,
      notes: '',
      notes_by: '',
    });
  });

  it('pages with limit and offset', async () => {
    const res = await u.as('GET', `/api/config/devices/${deviceId}/configs?limit=2&offset=1`);
    expect(res.body.configs.map((v: any) => v.version)).toEqual([3, 2]);
    expect(res.body.total).toBe(4);
  });

  it('refuses a limit over the maximum with 400', async () => {
    expect((await u.as('GET', `/api/config/devices/${deviceId}/configs?limit=100000`)).status).toBe(400);
  });
});

describe('stored versions', () => {
  it('gives an unchanged device the same config_hash, a changed one another', async () => {
    const list = (await u.as('GET', `/api/config/devices/${deviceId}/configs`)).body.configs;
    const [v4, v3, v2, v1] = list;
    expect(v1.config_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(v2.config_hash).toBe(v1.config_hash);
    expect(v3.config_hash).not.toBe(v2.config_hash);
    expect(v1.size_bytes).toBe(Buffer.byteLength(CONFIG_A));
    expect(v1.line_count).toBe(6);
    expect(v4).toMatchObject({ status: 'failed', error_message: 'Authentication failed for netops', size_bytes: 0 });
  });

  it('GET latest returns the newest version with config_text', async () => {
    const res = await u.as('GET', `/api/config/devices/${deviceId}/configs/latest`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ version: 4, status: 'failed', config_text: '' });
  });

  it('GET :version returns that version with config_text', async () => {
    const res = await u.as('GET', `/api/config/devices/${deviceId}/configs/3`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ version: 3, config_text: CONFIG_B, status: 'success' });
  });

  it('keeps a large config byte for byte, compressed with lz4 where the server has it (pglz where not, as on PGlite)', async () => {
    const device = (await u.device((await u.profile()).id, { name: 'core-1' })).id;
    const lines = Array.from({ length: 3000 }, (_, i) => `interface Te0/${i}\n description port ${i} to rack ${i % 40}\n!`);
    const big = `hostname core-1\n!\n${lines.join('\n')}\nend\n`;
    await record(device, u.orgId, [cli(big)]);
    const res = await u.as('GET', `/api/config/devices/${device}/configs/latest`);
    expect(res.body.config_text).toBe(big);
    const { rows } = await c.db.raw(
      `SELECT pg_column_compression(config_text) AS method,
              (SELECT 'lz4' = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression') AS lz4
         FROM config_versions WHERE device_id = ?`,
      [device],
    );
    expect(rows[0].method).toBe(rows[0].lz4 ? 'lz4' : 'pglz');
  });

  it('404 for a version that does not exist, 400 for a non-integer one', async () => {
    const missing = await u.as('GET', `/api/config/devices/${deviceId}/configs/99`);
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('CONFIG_VERSION_NOT_FOUND');
    expect((await u.as('GET', `/api/config/devices/${deviceId}/configs/abc`)).status).toBe(400);
    expect((await u.as('GET', `/api/config/devices/${deviceId}/configs/0`)).status).toBe(400);
  });

  it('latest is 404 for a device with no versions', async () => {
    const fresh = await u.device((await u.profile()).id);
    const res = await u.as('GET', `/api/config/devices/${fresh.id}/configs/latest`);
    expect(res.status).toBe(404);
    expect(res.body.error).toMatch(/no stored config versions/);
  });

  it('numbers versions without gaps or clashes when many are stored at once', async () => {
    const dev = await u.device((await u.profile()).id);
    await Promise.all(Array.from({ length: 20 }, (_, i) => record(dev.id, u.orgId, [cli(`hostname x\n! ${i}\n`)])));
    const list = (await u.as('GET', `/api/config/devices/${dev.id}/configs?limit=100`)).body.configs;
    expect(list.map((v: any) => v.version)).toEqual(Array.from({ length: 20 }, (_, i) => 20 - i));
  });
});

describe('PUT /api/config/devices/:device_id/configs/:version/notes', () => {
  it('sets notes with notes_by from the caller', async () => {
    const res = await u.as('PUT', `/api/config/devices/${deviceId}/configs/3/notes`, { body: { notes: 'after the uplink change' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ version: 3, notes: 'after the uplink change', notes_by: u.username });
    const read = await u.as('GET', `/api/config/devices/${deviceId}/configs/3`);
    expect(read.body).toMatchObject({ notes: 'after the uplink change', notes_by: u.username });
  });

  it('refuses a body without notes, with a wrong type or an unknown field', async () => {
    for (const body of [{}, { notes: 5 }, { notes: 'x', extra: 1 }]) {
      const res = await u.as('PUT', `/api/config/devices/${deviceId}/configs/3/notes`, { body });
      expect(res.status).toBe(400);
    }
  });

  it('404 for a missing version', async () => {
    expect((await u.as('PUT', `/api/config/devices/${deviceId}/configs/42/notes`, { body: { notes: 'x' } })).status).toBe(404);
  });
});

describe('GET /api/config/devices/:device_id/diff-versions', () => {
  it('reports identical versions', async () => {
    const res = await u.as('GET', `/api/config/devices/${deviceId}/diff-versions?old_version=1&new_version=2`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      old_version: 1,
      new_version: 2,
      old_format: 'cli',
      new_format: 'cli',
      identical: true,
      diff: '',
      additions: 0,
      deletions: 0,
    });
  });

  it('gives a unified diff with additions and deletions', async () => {
    const res = await u.as('GET', `/api/config/devices/${deviceId}/diff-versions?old_version=2&new_version=3`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ old_version: 2, new_version: 3, identical: false, additions: 4, deletions: 1 });
    const lines: string[] = res.body.diff.split('\n');
    // API.md's line kinds only: hunk ranges, then removed (-), added (+) and unchanged (space) lines.
    expect(lines[0]).toMatch(/^@@ -\d+,\d+ \+\d+,\d+ @@$/);
    expect(lines.every((l) => /^[-+ ]/.test(l) || /^@@ .* @@$/.test(l))).toBe(true);
    expect(lines.filter((l) => l.startsWith('+'))).toHaveLength(4);
    expect(lines.filter((l) => l.startsWith('-'))).toHaveLength(1);
    expect(lines).toContain('- description uplink');
    expect(lines).toContain('+ description core uplink');
    expect(lines).toContain('+interface Gi0/2');
    expect(lines).toContain(' hostname r1');
  });

  it('answers for versions too different for a minimal diff: one block, correct, in linear time', async () => {
    // 16,000 lines each, every other one changed: a minimal diff took 30 s of the event loop here.
    const config = (tag: string) =>
      Array.from({ length: 8000 }, (_, i) => `interface GigabitEthernet0/${i}\n description uplink-${tag}-${i}`).join('\n') + '\nend\n';
    const big = (await u.device((await u.profile()).id, { name: 'r-big' })).id;
    await record(big, u.orgId, [cli(config('a'))]);
    await record(big, u.orgId, [cli(config('b'))]);
    const res = await u.as('GET', `/api/config/devices/${big}/diff-versions?old_version=1&new_version=2`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ identical: false, additions: 15_999, deletions: 15_999 });
    // The first line is shared, so it stays as context; the diff turns the old version into the new one.
    expect(res.body.diff.split('\n').slice(0, 3)).toEqual(['@@ -1,16001 +1,16001 @@', ' interface GigabitEthernet0/0', '- description uplink-a-0']);
    expect(applyPatch(config('a'), `--- a\n+++ b\n${res.body.diff}\n`)).toBe(config('b'));
  });

  it('404 when a version does not exist', async () => {
    const res = await u.as('GET', `/api/config/devices/${deviceId}/diff-versions?old_version=1&new_version=77`);
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('CONFIG_VERSION_NOT_FOUND');
    expect(res.body.error).toContain('77');
  });

  it('400 when a version is missing or not an integer', async () => {
    expect((await u.as('GET', `/api/config/devices/${deviceId}/diff-versions?old_version=1`)).status).toBe(400);
    expect((await u.as('GET', `/api/config/devices/${deviceId}/diff-versions?old_version=1&new_version=x`)).status).toBe(400);
  });
});

describe('GET /api/devices/with-backup-info', () => {
  it('lists devices with their newest and newest successful backup', async () => {
    const res = await u.as('GET', '/api/devices/with-backup-info?limit=100');
    expect(res.status).toBe(200);
    const r1 = res.body.devices.find((d: any) => d.id === deviceId);
    expect(r1).toMatchObject({ name: 'r1', backup_count: 4 });
    expect(r1.last_backup).toMatchObject({ version: 4, status: 'failed', error_message: 'Authentication failed for netops' });
    expect(r1.last_successful_backup).toMatchObject({ version: 3, status: 'success', size_bytes: Buffer.byteLength(CONFIG_B) });
    // Times as every other route gives them: ISO 8601 in UTC, whatever the server's TimeZone.
    const v4 = await u.as('GET', `/api/config/devices/${deviceId}/configs/4`);
    expect(r1.last_backup.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(r1.last_backup.created_at).toBe(v4.body.created_at);
    const fresh = res.body.devices.find((d: any) => d.backup_count === 0);
    expect(fresh.last_backup).toBeNull();
    expect(res.body.devices.some((d: any) => d.id === otherDeviceId)).toBe(false);
  });
});

describe('transcripts', () => {
  it('are stored with the device credentials and config secrets masked', async () => {
    const [row] = await c.db('config_versions').where({ device_id: deviceId, version: 1 }).select('id');
    const res = await u.as('GET', `/api/devices/snapshots/backups/${row.id}/log`);
    expect(res.status).toBe(200);
    expect(res.body.log).toContain('r1#show running-config');
    expect(res.body.log).not.toContain('hunter2-secret');
    expect(res.body.log).not.toContain('$1$abcd$xyz');
    expect(res.body.log).toMatch(/^enable secret 5 <secret:[0-9a-f]{8}>$/m);
  });
});

describe('another organization', () => {
  it('gets 404 on every :device_id route and sees nothing in lists', async () => {
    const paths: Array<[string, string, unknown?]> = [
      ['GET', `/api/config/devices/${deviceId}/configs`],
      ['GET', `/api/config/devices/${deviceId}/configs/latest`],
      ['GET', `/api/config/devices/${deviceId}/configs/1`],
      ['PUT', `/api/config/devices/${deviceId}/configs/1/notes`, { notes: 'x' }],
      ['GET', `/api/config/devices/${deviceId}/diff-versions?old_version=1&new_version=2`],
      ['POST', `/api/config/devices/${deviceId}/pull?method=cli`],
      ['POST', `/api/devices/${deviceId}/test-credential`],
    ];
    for (const [method, path, body] of paths) {
      const res = await other.as(method, path, body === undefined ? {} : { body });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    const bulk = await other.as('POST', '/api/devices/bulk/test-credentials', { body: { device_ids: [deviceId] } });
    expect(bulk.status).toBe(404);
    expect(bulk.body.missing).toEqual([deviceId]);
    const pull = await other.as('POST', '/api/config/devices/bulk-pull', { body: { device_ids: [deviceId] } });
    expect(pull.status).toBe(404);
    const [row] = await c.db('config_versions').where({ device_id: deviceId, version: 1 }).select('id');
    const log = await other.as('GET', `/api/devices/snapshots/backups/${row.id}/log`);
    expect(log.status).toBe(404);
    expect(log.text).toBe('Backup not found');
    const list = await other.as('GET', '/api/devices/with-backup-info');
    expect(list.body.devices.map((d: any) => d.id)).toEqual([otherDeviceId]);
    expect(list.body.devices[0].backup_count).toBe(0);
  });

  it('a user without devices.access gets 403', async () => {
    const auditor = await c.createOrgUser(['auditor']);
    const res = await c.request('GET', `/api/config/devices/${deviceId}/configs`, { token: auditor.token });
    expect(res.status).toBe(403);
  });
});

describe("recording many outcomes at once (the job service's fast path)", () => {
  it("numbers each device's versions in order, even one device twice in a batch, and reports a deleted device as gone", async () => {
    const profile = await u.profile({ password: 'hunter2-secret' });
    const [a, b, gone] = await Promise.all(['batch-a', 'batch-b', 'batch-gone'].map(async (name) => (await u.device(profile.id, { name })).id));
    expect((await u.as('DELETE', `/api/devices/${gone}`)).status).toBe(204);
    const outcomes = [
      outcomeOf(a, u.orgId, [cli(CONFIG_A)]),
      outcomeOf(b, u.orgId, [cli(CONFIG_B)]),
      outcomeOf(gone, u.orgId, [cli(CONFIG_A)]),
      outcomeOf(a, u.orgId, [cli(CONFIG_B)]),
      outcomeOf(b, other.orgId, [cli(CONFIG_A)]), // another organization's job naming this device: it is not there
    ];
    const recorded = await c.db.transaction((trx) => c.services.configs!.recordBackups(outcomes, trx));
    expect(recorded.map((r) => r.ok)).toEqual([true, true, false, true, false]);
    expect(recorded[2].error).toMatch(/deleted/);
    const versions = async (id: string) =>
      (await c.db('config_versions').where({ device_id: id }).orderBy('version', 'desc').select('version', 'job_id')).map((v) => [
        v.version,
        v.job_id,
      ]);
    expect(await versions(a)).toEqual([
      [2, outcomes[3].jobId],
      [1, outcomes[0].jobId],
    ]);
    expect(await versions(b)).toEqual([[1, outcomes[1].jobId]]);
    expect((await u.as('GET', `/api/config/devices/${a}/configs/latest`)).body.config_text).toBe(CONFIG_B);
    // The transcript is masked in a batch as alone.
    const [{ transcript }] = await c.db('config_versions').where({ device_id: a, version: 1 }).select('transcript');
    expect(transcript).not.toContain('hunter2-secret');
  });
});

describe('bad input', () => {
  it('400 for a bad device UUID or pull method, never 500', async () => {
    expect((await u.as('GET', '/api/config/devices/not-a-uuid/configs')).status).toBe(400);
    const bad = await u.as('POST', `/api/config/devices/${deviceId}/pull?method=telnet`);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('method');
  });

  it('400 for bulk-pull without device_ids, with an empty list or bad ids', async () => {
    for (const body of [{}, { device_ids: [] }, { device_ids: ['x'] }, { device_ids: [deviceId], method: 'ftp' }]) {
      expect((await u.as('POST', '/api/config/devices/bulk-pull', { body })).status).toBe(400);
    }
  });
});
