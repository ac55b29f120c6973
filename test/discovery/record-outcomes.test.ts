import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DiscoveryRecords, SectionResult } from '../../shared/src/discovery/records';
import { pollOverCli } from '../../agent/src/discovery/ssh-poll';
import { sshCliDriver } from '../../agent/src/drivers/ssh';
import type { DiscoveryService } from '../../controller/src/discovery/service';
import type { JobOutcome } from '../../controller/src/jobs/types';
import { startSshDevice, sshTarget, type SimSshDevice } from '../sim/ssh';
import { clearSimNetwork, registerSimNetwork } from '../sim/ssh/discovery-data';
import { discoveryEnv, type DiscoveryEnv } from './helpers';
import { inventoryUser, type InventoryUser } from '../inventory/helpers';

/**
 * The poll outcome recorder's two paths: recordOutcomes (the engine's handleMany, set-based)
 * stores exactly what recordOutcome stores for the same outcomes one by one. Two sets of
 * devices get the same polls and outcomes (real poll results of simulated devices, plus
 * partial, failed, stale, mismatched, duplicate and malformed ones); one set is recorded one
 * outcome at a time, the other in one batch, and their polls and records must be equal.
 * Also: concurrent POST /poll requests each answer once their job row is stored.
 */
let env: DiscoveryEnv;
let discovery: DiscoveryService;
let ios: SimSshDevice;
let eos: SimSshDevice;
let profileId: string;
const results: Record<string, { sections: SectionResult[]; records: DiscoveryRecords }> = {};

beforeAll(async () => {
  env = await discoveryEnv({ agent: false });
  discovery = env.c.services.discovery!;
  ios = await startSshDevice({ dialect: 'vendor_ios', hostname: 'batch-ios' });
  eos = await startSshDevice({ dialect: 'vendor_eos', hostname: 'batch-eos' });
  clearSimNetwork();
  registerSimNetwork([
    { hostname: 'batch-ios', deviceType: 'vendor_ios' },
    { hostname: 'batch-eos', deviceType: 'vendor_eos' },
  ]);
  for (const [name, dev] of [
    ['ios', ios],
    ['eos', eos],
  ] as const) {
    const session = await sshCliDriver.open(sshTarget(dev, { username: 'admin', password: 'admin' }));
    try {
      results[name] = await pollOverCli(session, dev.deviceType);
    } finally {
      await session.close();
    }
  }
  expect(results.ios.sections.map((s) => s.status)).toEqual(['ok', 'ok', 'ok', 'ok', 'ok', 'ok']);
  profileId = (await env.u.profile({ username: 'admin', password: 'admin' })).id;
});
afterAll(async () => {
  await env?.close();
  await ios?.close();
  await eos?.close();
  clearSimNetwork(); // the simulated network is module state: the next file of this worker starts empty
});

const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value));

/** An ios result whose ARP section failed (a partial poll). */
function partialResult() {
  const r = clone(results.ios);
  const arp = r.sections.find((s) => s.name === 'arp')!;
  Object.assign(arp, { status: 'failed', records: 0, error: 'show ip arp: timed out after 30 s' });
  r.records.arp = [];
  return r;
}

async function devices(n: number, tag: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await env.u.device(profileId, { name: `${tag}-${i}` })).id);
  return ids;
}

/** A queued poll of each device, straight in the store (no job: nothing else records it). */
async function openPolls(deviceIds: string[]): Promise<string[]> {
  const found = await discovery.store.requestPolls(
    deviceIds.map((deviceId) => ({ orgId: env.u.orgId, deviceId, trigger: 'manual', requestedBy: null })),
  );
  expect(found.map((f) => f?.created)).toEqual(deviceIds.map(() => true));
  return found.map((f) => f!.row.id);
}

let jobNo = 0;
function outcome(deviceId: string, groupId: string | null, over: Partial<JobOutcome<'poll'>> = {}): JobOutcome<'poll'> {
  jobNo += 1;
  return {
    jobId: `00000000-0000-4000-8000-${String(jobNo).padStart(12, '0')}`,
    kind: 'poll',
    orgId: env.u.orgId,
    deviceId,
    groupId,
    status: 'succeeded',
    error: null,
    result: clone(results.ios) as never,
    agentId: null,
    startedAt: new Date(Date.UTC(2030, 0, 1, 0, 0, jobNo)),
    finishedAt: new Date(Date.UTC(2030, 0, 1, 0, 1, jobNo)),
    ...over,
  };
}

/** Round 1: every device succeeded with the full ios result (records to replace or keep). */
const roundOne = (d: string[], polls: string[]) => d.map((id, i) => outcome(id, polls[i], { startedAt: null }));

/** Round 2: the cases, in the order the engine would hand them over. */
function roundTwo(d: string[], first: string[], open: string[]): JobOutcome[] {
  const eosResult = () => clone(results.eos) as never;
  return [
    outcome(d[0], open[0]),
    outcome(d[1], open[1], { result: eosResult() }), // cdp unsupported: the round-1 cdp neighbors go
    outcome(d[2], open[2], { result: partialResult() as never }),
    outcome(d[3], open[3], { status: 'failed', error: 'Authentication failed for admin', result: null }),
    outcome(d[4], first[4]), // stale: that poll ended in round 1
    outcome(d[0], open[5]), // another device's poll
    outcome(d[6], open[6], { result: eosResult() }),
    outcome(d[6], open[6], { status: 'failed', error: 'second outcome of one poll', result: null }),
    outcome(d[0], open[7], { status: 'failed', error: 'mismatch first', result: null }),
    outcome(d[7], open[7], { result: partialResult() as never }),
    outcome(d[0], null),
    outcome(d[8], open[8], { result: { sections: 'not a list', records: 5 } as never }),
    outcome(d[9], open[9], { status: 'failed', error: null, result: { sections: [{ name: 'lldp', status: 'failed', error: 'x' }] } as never }),
  ];
}

/** What one set of devices holds, by device position, with poll ids replaced by the poll's place in its device's history. */
async function stored(deviceIds: string[]) {
  const db = env.c.db;
  const polls = await db('discovery_polls')
    .whereIn('device_id', deviceIds)
    .orderBy(['created_at', 'id'])
    .select(
      'id',
      'device_id',
      'trigger',
      'transport',
      'status',
      'error',
      'counts',
      'sections',
      'started_at',
      'finished_at',
      'job_id',
      'requested_by',
    );
  // A record per row, numbered within its section.
  const records = (
    await db.raw(
      `SELECT s.device_id, s.org_id, s.kind, s.section, e.n - 1 AS position, s.poll_id, e.data, s.collected_at
       FROM discovery_sections s CROSS JOIN LATERAL jsonb_array_elements(s.records) WITH ORDINALITY AS e(data, n)
      WHERE s.device_id = ANY(?::uuid[]) ORDER BY s.kind, s.section, e.n`,
      [deviceIds],
    )
  ).rows as {
    device_id: string;
    org_id: string;
    kind: string;
    section: string;
    position: number;
    poll_id: string;
    data: unknown;
    collected_at: Date;
  }[];
  const place = new Map<string, number>();
  const perDevice = new Map<string, number>();
  for (const p of polls) {
    const n = perDevice.get(p.device_id) ?? 0;
    place.set(p.id, n);
    perDevice.set(p.device_id, n + 1);
  }
  return deviceIds.map((id) => ({
    polls: polls.filter((p) => p.device_id === id).map(({ id: _, device_id: __, ...rest }) => rest),
    records: records.filter((r) => r.device_id === id).map(({ device_id: _, poll_id, ...rest }) => ({ ...rest, poll: place.get(poll_id) })),
  }));
}

describe('recordOutcomes (handleMany for poll)', () => {
  it('stores exactly what recordOutcome stores one outcome at a time', async () => {
    const n = 10;
    const one = await devices(n, 'one-by-one');
    const many = await devices(n, 'batch');
    const at = (ids: string[], outcomes: JobOutcome[]) => outcomes.map((o) => ({ ...o, deviceId: ids[one.indexOf(o.deviceId)] ?? o.deviceId }));

    const oneFirst = await openPolls(one);
    const manyFirst = await openPolls(many);
    const first = roundOne(one, oneFirst);
    for (const o of first) await env.c.db.transaction((trx) => discovery.recordOutcome(o, trx));
    await env.c.db.transaction((trx) =>
      discovery.recordOutcomes(
        at(many, first).map((o, i) => ({ ...o, groupId: manyFirst[i] })),
        trx,
      ),
    );

    const oneOpen = await openPolls(one);
    const manyOpen = await openPolls(many);
    const second = roundTwo(one, oneFirst, oneOpen);
    const polls = new Map([...oneFirst.map((id, i) => [id, manyFirst[i]] as const), ...oneOpen.map((id, i) => [id, manyOpen[i]] as const)]);
    for (const o of second) await env.c.db.transaction((trx) => discovery.recordOutcome(o, trx));
    await env.c.db.transaction((trx) =>
      discovery.recordOutcomes(
        at(many, second).map((o) => ({ ...o, groupId: o.groupId && polls.get(o.groupId)! })),
        trx,
      ),
    );

    const a = await stored(one);
    const b = await stored(many);
    expect(b).toEqual(a);

    // And what they hold is what each case should leave.
    const statusOf = (d: number) => a[d].polls.map((p) => p.status);
    const recordsOf = (d: number, section: string) => a[d].records.filter((r) => r.section === section);
    expect(statusOf(0)).toEqual(['succeeded', 'succeeded']);
    expect(a[0].polls[1].counts).toEqual(Object.fromEntries(Object.entries(results.ios.records).map(([k, v]) => [k, v.length])));
    expect(recordsOf(0, 'interfaces').map((r) => r.poll)).toEqual(results.ios.records.interfaces.map(() => 1));
    expect(recordsOf(0, 'interfaces').map((r) => r.data)).toEqual(clone(results.ios.records.interfaces));
    expect(results.eos.sections.find((s) => s.name === 'cdp')?.status).toBe('unsupported');
    expect(recordsOf(1, 'cdp')).toEqual([]);
    expect(recordsOf(0, 'cdp').length).toBeGreaterThan(0);
    expect(statusOf(2)).toEqual(['succeeded', 'partial']);
    expect(a[2].polls[1].error).toBe('arp: show ip arp: timed out after 30 s');
    expect(recordsOf(2, 'arp').length).toBeGreaterThan(0);
    expect(recordsOf(2, 'arp').every((r) => r.poll === 0)).toBe(true);
    expect(recordsOf(2, 'interfaces').every((r) => r.poll === 1)).toBe(true);
    expect(a[3].polls[1]).toMatchObject({ status: 'failed', error: 'Authentication failed for admin', counts: {} });
    expect(a[3].records.every((r) => r.poll === 0)).toBe(true);
    expect(statusOf(4)).toEqual(['succeeded', 'queued']);
    expect(statusOf(5)).toEqual(['succeeded', 'queued']);
    expect(a[6].polls[1]).toMatchObject({ status: 'succeeded', error: null });
    expect(a[7].polls[1]).toMatchObject({ status: 'partial' });
    expect(a[8].polls[1]).toMatchObject({
      status: 'succeeded',
      error: null,
      sections: [],
      counts: { interfaces: 0, neighbors: 0, arp: 0, mac: 0, vlans: 0 },
    });
    expect(a[8].records.every((r) => r.poll === 0)).toBe(true);
    expect(a[9].polls[1]).toMatchObject({ status: 'failed', error: 'The poll failed' });
  });

  it('records nothing for an empty batch or one with no open poll', async () => {
    const [d] = await devices(1, 'empty');
    await env.c.db.transaction((trx) => discovery.recordOutcomes([], trx));
    await env.c.db.transaction((trx) => discovery.recordOutcomes([outcome(d, null), outcome(d, '00000000-0000-4000-8000-000000000000')], trx));
    expect(await stored([d])).toEqual([{ polls: [], records: [] }]);
  });
});

describe('POST /api/devices/:id/poll under concurrent requests', () => {
  it('answers each request once its job is stored, and one poll per device however many ask', async () => {
    const ids = await devices(24, 'burst');
    const answers = await Promise.all(
      [...ids, ...ids.slice(0, 8)].map(async (id) => {
        const res = await env.u.as('POST', `/api/devices/${id}/poll`);
        expect(res.status, res.text).toBe(202);
        // Stored by the time the answer arrived: the poll names its job, whose row exists.
        const poll = await env.c.db('discovery_polls').where({ id: res.body.poll_id }).first('job_id', 'device_id', 'status', 'error');
        expect(poll, JSON.stringify(poll)).toMatchObject({ device_id: id, status: 'queued', error: null });
        expect(poll.job_id, JSON.stringify(poll)).toBeTruthy();
        expect(await env.c.db('jobs').where({ id: poll.job_id }).first('group_id', 'device_id', 'kind')).toEqual({
          group_id: res.body.poll_id,
          device_id: id,
          kind: 'poll',
        });
        return { id, ...res.body };
      }),
    );
    const byDevice = new Map<string, Set<string>>();
    for (const a of answers) byDevice.set(a.id, (byDevice.get(a.id) ?? new Set()).add(a.poll_id));
    expect([...byDevice.values()].map((s) => s.size)).toEqual(ids.map(() => 1));
    expect(answers.filter((a) => a.queued)).toHaveLength(ids.length);
    expect(answers.filter((a) => !a.queued).every((a) => a.message === 'A poll of this device is already queued or running')).toBe(true);
    expect(await env.c.db('jobs').whereIn('device_id', ids).count({ n: '*' }).first()).toEqual({ n: ids.length });
  });

  it('answers each request of one batch for itself: found, unknown, snmp, another organization, twice the same device', async () => {
    const [a, b] = await devices(2, 'mixed');
    const snmp = (await env.u.device(profileId, { name: 'mixed-snmp', device_type: 'snmp' })).id;
    const other = await inventoryUser(env.c, ['org_admin']);
    const theirs = (await other.device((await other.profile()).id, { name: 'mixed-theirs' })).id;
    const unknown = '00000000-0000-4000-8000-00000000beef';
    // Sent together, most of these meet in one of the controller's batches of requests.
    const asks: [InventoryUser, string][] = [
      [env.u, a],
      [env.u, unknown],
      [env.u, snmp],
      [env.u, theirs],
      [other, theirs],
      [env.u, b],
      [env.u, a],
    ];
    const answers = await Promise.all(asks.map(([u, id]) => u.as('POST', `/api/devices/${id}/poll`)));
    expect(answers.map((r) => [r.status, r.body.code ?? r.body.queued])).toEqual([
      [202, expect.any(Boolean)],
      [404, 'DEVICE_NOT_FOUND'],
      [400, 'DISCOVERY_UNSUPPORTED_DEVICE'],
      [404, 'DEVICE_NOT_FOUND'],
      [202, true],
      [202, true],
      [202, expect.any(Boolean)],
    ]);
    // Device a was asked twice: one answer queued it, both name the same poll.
    expect([answers[0].body.queued, answers[6].body.queued].sort()).toEqual([false, true]);
    expect(answers[6].body.poll_id).toBe(answers[0].body.poll_id);
    const polls = await env.c.db('discovery_polls').whereIn('device_id', [a, b, snmp, theirs]).select('device_id', 'org_id');
    expect(polls.map((p) => `${p.device_id}/${p.org_id}`).sort()).toEqual(
      [`${a}/${env.u.orgId}`, `${b}/${env.u.orgId}`, `${theirs}/${other.orgId}`].sort(),
    );
  });

  it('the store answers one batch request by request, in order', async () => {
    const [a] = await devices(1, 'store-batch');
    const snmp = (await env.u.device(profileId, { name: 'store-batch-snmp', device_type: 'snmp' })).id;
    const other = await inventoryUser(env.c, ['org_admin']);
    const ask = (u: InventoryUser, deviceId: string, requestedBy: string | null = null) => ({
      orgId: u.orgId,
      deviceId,
      trigger: 'manual' as const,
      requestedBy,
    });
    const found = await discovery.store.requestPolls([ask(env.u, a, env.u.userId), ask(other, a), ask(env.u, snmp), ask(env.u, a)]);
    expect(found.map((f) => f && [f.deviceType, f.created, f.row.device_id ?? null])).toEqual([
      ['vendor_ios', true, a],
      undefined,
      ['snmp', false, null],
      ['vendor_ios', false, a],
    ]);
    expect(found[3]!.row.id).toBe(found[0]!.row.id);
    // The first request of the device asked: its requester is the poll's.
    expect(found[0]!.row.requested_by).toBe(env.u.userId);
    const again = await discovery.store.requestPolls([ask(env.u, a)]);
    expect(again[0]).toMatchObject({ created: false, row: { id: found[0]!.row.id, status: 'queued' } });
  });
});
