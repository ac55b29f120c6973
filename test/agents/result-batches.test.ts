/**
 * How the controller records a burst of agent results: together, with one statement marking
 * them final and the kind's handleMany storing them; and, when that fails, each alone in its
 * own savepoint, so one outcome that cannot be recorded never holds up the others. Real
 * controller, PostgreSQL and NATS JetStream; the results are signed with an enrolled agent's
 * key and published on its link, as the agent would.
 */
import type { Knex } from 'knex';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { natsAgentLink } from '../../agent/src/nats-link';
import type { JobOutcome } from '../../controller/src/jobs/types';
import type { AgentLink } from '../../shared/src/jobs/link';
import { importAgentPrivateKey, type AnyKey } from '../../shared/src/jobs/crypto';
import { startTestController, type TestController } from '../helpers/controller';
import { SHARED_NATS, dropNatsNamespace, enrollAgent, jobRow, makeDevice, makeProfile, natsPrefix, resultsToken, until, type Org } from './helpers';

const prefix = natsPrefix();
let tc: TestController;
let org: Org;
let link: AgentLink & { connection: { close(): Promise<void> } };
let agentId: string;
let signKey: AnyKey;
let profileId: string;
/** Job ids whose recording throws, in handleMany and in the one-by-one handler alike. */
const poisoned = new Set<string>();
/** Job ids whose recording throws in handleMany only: their batch is recorded one by one. */
const batchPoisoned = new Set<string>();
const batches: number[] = [];

/** Leaves a mark inside the recording transaction: it survives only if that transaction commits. */
const mark = (trx: Knex.Transaction, o: JobOutcome, how: string) =>
  trx('job_logs').insert({ job_id: o.jobId, attempt: 1, agent_id: null, level: 'info', text: `recorded ${how}`, at: new Date() });

beforeAll(async () => {
  tc = await startTestController({ config: { natsUrl: SHARED_NATS, natsPrefix: prefix, jobs: { sweepIntervalMs: 200 } } });
  org = await tc.createOrgUser(['org_admin']);
  tc.services.jobs.onOutcome(
    'test_credential',
    async (o, trx) => {
      if (poisoned.has(o.jobId)) throw new Error('this outcome cannot be recorded');
      await mark(trx, o, 'alone');
    },
    {
      handleMany: async (outcomes, trx) => {
        batches.push(outcomes.length);
        for (const o of outcomes) {
          await mark(trx, o, 'together');
          if (poisoned.has(o.jobId) || batchPoisoned.has(o.jobId)) throw new Error('this outcome cannot be recorded');
        }
      },
    },
  );
  // Enrolled but never started: its jobs wait in NATS while the test answers for it.
  const { identity } = await enrollAgent(tc, org, { name: 'answering' });
  agentId = identity.agent_id;
  signKey = (await importAgentPrivateKey(identity.private_jwk)).sign;
  link = await natsAgentLink(SHARED_NATS, identity);
  profileId = await makeProfile(tc, org, { ssh_port: 22, password: 'unused-secret' });
});

afterAll(async () => {
  await link?.close();
  await tc?.close();
  await dropNatsNamespace(SHARED_NATS, prefix);
});

/** Submits one test_credential job per new device and waits until all are dispatched. */
async function dispatchedJobs(n: number): Promise<string[]> {
  const devices = await Promise.all(Array.from({ length: n }, () => makeDevice(tc, org, { profile_id: profileId })));
  const ids = await tc.services.jobs.submit(
    devices.map((deviceId) => ({ orgId: org.orgId, kind: 'test_credential' as const, deviceId, params: {}, deadlineMs: 60_000 })),
  );
  await until(
    'the jobs to be dispatched',
    async () => (await tc.db('jobs').whereIn('id', ids).where({ status: 'dispatched' }).count<{ n: number }[]>('* as n'))[0].n == n,
  );
  return ids;
}

/** The agent's results for `ids`, in one results event (so the controller takes them as one burst). */
async function answer(ids: string[], extra: (jobId: string) => Record<string, unknown> = () => ({})): Promise<void> {
  const token = await resultsToken(
    signKey,
    agentId,
    ids.map((jobId) => ({ job_id: jobId, ...extra(jobId) })),
  );
  await link.publish(token, `${ids[0]}:${ids.length}:results`);
}

const marks = async (ids: string[]) => {
  const rows: { job_id: string; text: string }[] = await tc
    .db('job_logs')
    .whereIn('job_id', ids)
    .where('text', 'like', 'recorded %')
    .select('job_id', 'text');
  return new Map(ids.map((id) => [id, rows.filter((r) => r.job_id === id).map((r) => r.text)]));
};

it('records a burst of results together: each job final once, its handler mark committed with it', async () => {
  const ids = await dispatchedJobs(6);
  await answer(ids);
  const outcomes = await tc.services.jobs.wait(ids, 30_000);
  expect(outcomes.map((o) => o.status)).toEqual(ids.map(() => 'succeeded'));
  expect(batches.reduce((a, b) => a + b, 0)).toBe(6); // every outcome went through handleMany
  for (const [id, texts] of await marks(ids)) {
    expect(texts, id).toEqual(['recorded together']);
    expect(await jobRow(tc, id)).toMatchObject({ status: 'succeeded', agent_id: agentId, result: { ok: true, message: 'login ok' } });
  }
});

it(
  'falls back to one outcome at a time when the batch fails: the others are recorded once, the bad one ends failed with the reason',
  { timeout: 60_000 },
  async () => {
    const ids = await dispatchedJobs(5);
    const [bad, ...good] = ids;
    poisoned.add(bad);
    await answer(ids);
    const outcomes = await tc.services.jobs.wait(good, 30_000);
    expect(outcomes.map((o) => o.status)).toEqual(good.map(() => 'succeeded'));
    const seen = await marks(ids);
    for (const id of good) expect(seen.get(id)!.length, id).toBe(1); // a rolled-back batch leaves no mark
    // The poisoned outcome is retried, then given up on with the reason; its marks were all rolled back.
    const [failed] = await tc.services.jobs.wait([bad], 40_000);
    expect(failed).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/^Recording the job's outcome failed \d+ times: this outcome cannot be recorded/),
    });
    expect((await marks([bad])).get(bad)).toEqual([]);
    expect(tc.logs()).toMatch(/recording job results together failed; recording them one by one/);
  },
);

it('pins the SSH host keys and gNMI certificates results report the same way together and one by one', { timeout: 60_000 }, async () => {
  const hex = (i: number) => Array.from({ length: 32 }, (_, j) => ((i * 7 + j) % 256).toString(16).padStart(2, '0').toUpperCase()).join(':');
  const identities = (i: number) => [
    {
      host_key: { type: 'ssh-ed25519', fingerprint: `SHA256:${String(i).repeat(43).slice(0, 43)}` },
      gnmi_cert: { sha256: hex(i), subject: `CN=d${i}`, not_after: '2030-01-02T03:04:05.000Z' },
    },
    { host_key: { type: 'ssh-rsa', fingerprint: `SHA256:${'A'.repeat(42)}${i}` } },
    { gnmi_cert: { sha256: hex(i + 100), subject: `CN=g${i}`, not_after: null } },
    {}, // no SSH or gNMI-over-TLS session: nothing to pin
  ];
  const pinRows = async (ids: string[]) =>
    (
      await tc
        .db('jobs as j')
        .join('devices as d', 'd.id', 'j.device_id')
        .whereIn('j.id', ids)
        .orderBy('j.created_at')
        .orderBy('j.id')
        .select('j.id', 'd.ssh_host_key_type', 'd.ssh_host_key_sha256', 'd.gnmi_cert_sha256', 'd.gnmi_cert_subject', 'd.gnmi_cert_not_after')
    ).map(({ id, ...pins }: any) => ({ id, pins: { ...pins, gnmi_cert_not_after: pins.gnmi_cert_not_after?.toISOString() ?? null } }));
  const expected = (extra: Record<string, any>) => ({
    ssh_host_key_type: extra.host_key?.type ?? null,
    ssh_host_key_sha256: extra.host_key?.fingerprint ?? null,
    gnmi_cert_sha256: extra.gnmi_cert?.sha256 ?? null,
    gnmi_cert_subject: extra.gnmi_cert?.subject ?? null,
    gnmi_cert_not_after: extra.gnmi_cert?.not_after ?? null,
  });
  const round = async (i: number, oneByOne: boolean) => {
    const ids = await dispatchedJobs(4);
    const sent = new Map(ids.map((id, k) => [id, identities(i)[k]]));
    // Every job of the round fails handleMany, so each is recorded alone however the burst is split.
    if (oneByOne) for (const id of ids) batchPoisoned.add(id);
    const before = batches.length;
    await answer(ids, (id) => sent.get(id)!);
    const outcomes = await tc.services.jobs.wait(ids, 30_000);
    expect(outcomes.map((o) => o.status)).toEqual(ids.map(() => 'succeeded'));
    for (const [id, texts] of await marks(ids)) expect(texts, id).toEqual([oneByOne ? 'recorded alone' : 'recorded together']);
    expect(batches.length).toBeGreaterThan(before);
    const rows = await pinRows(ids);
    for (const { id, pins } of rows) expect(pins, id).toEqual(expected(sent.get(id)!));
    // In the order the identities were sent (the k-th job got the k-th kind of report).
    return ids.map((id) => rows.find((r) => r.id === id)!.pins);
  };
  const together = await round(1, false);
  const alone = await round(2, true);
  // The same shape of rows either way (only the fingerprints differ).
  expect(alone.map((p) => Object.entries(p).map(([k, v]) => [k, v === null]))).toEqual(
    together.map((p) => Object.entries(p).map(([k, v]) => [k, v === null])),
  );

  // A device keeps the pins it has, whatever a later result reports, together or alone.
  const again = await dispatchedJobs(1);
  const device = (await jobRow(tc, again[0])).device_id;
  const other = identities(3)[0];
  await answer(again, () => other);
  await tc.services.jobs.wait(again, 30_000);
  const [job2] = await tc.services.jobs.submit([{ orgId: org.orgId, kind: 'test_credential', deviceId: device, params: {}, deadlineMs: 60_000 }]);
  await until('the job to be dispatched', async () => (await jobRow(tc, job2)).status === 'dispatched');
  batchPoisoned.add(job2);
  await answer([job2], () => identities(4)[0]);
  await tc.services.jobs.wait([job2], 30_000);
  expect((await pinRows([job2]))[0].pins).toEqual(expected(other));
});

it("records a result's log lines once, with its outcome: a redelivered copy adds none, a late result of another outcome keeps its own", async () => {
  const [a, b, c] = await dispatchedJobs(3);
  const at = new Date().toISOString();
  const lines = (id: string, text: string) => ({
    logs: [
      { at, level: 'info', text: `${text}: info ${id}` },
      { at, level: 'warn', text: `${text} ${id}` },
    ],
  });
  await answer([a, b], (id) => lines(id, 'ran'));
  await answer([c], (id) => ({ status: 'failed', error: 'refused', result: null, ...lines(id, 'failed') }));
  await tc.services.jobs.wait([a, b, c], 30_000);
  const texts = async (id: string) =>
    (await tc.db('job_logs').where({ job_id: id }).whereNot('text', 'like', 'recorded %').orderBy('id').select('text')).map((r) => r.text);
  // A succeeded job keeps its warnings (its info lines only retell the outcome); a failed one every line.
  expect(await texts(a)).toEqual([`ran ${a}`]);
  expect(await texts(b)).toEqual([`ran ${b}`]);
  expect(await texts(c)).toEqual([`failed: info ${c}`, `failed ${c}`]);

  // One event: a's result again (a redelivered copy), and a result for b that contradicts the recorded one.
  const token = await resultsToken(signKey, agentId, [
    { job_id: a, ...lines(a, 'ran') },
    { job_id: b, status: 'failed', error: 'late', result: null, ...lines(b, 'late') },
  ]);
  await link.publish(token, `${a}:copy:results`);
  await until('the late lines to be recorded', async () => (await texts(b)).length === 3);
  expect(await texts(b)).toEqual([`ran ${b}`, `late: info ${b}`, `late ${b}`]);
  expect(await texts(a)).toEqual([`ran ${a}`]); // recorded in the same statement as b's, had it been
  expect(await jobRow(tc, b)).toMatchObject({ status: 'succeeded' });
  expect(tc.logs()).toMatch(/a result already recorded was delivered again/);
});

it('hands the lines sent with each result to a recorder that keeps its own log, together and alone, and stores none of them in job_logs', async () => {
  // Last in this file: from here on the kind's recorder keeps its lines (as the deployment runner does).
  const kept = new Map<string, string[]>();
  const keep = (o: JobOutcome, how: string) => kept.set(o.jobId, [...(o.logs ?? []).map((l) => `${l.level} ${l.text}`), how]);
  tc.services.jobs.onOutcome(
    'test_credential',
    async (o) => {
      keep(o, 'alone');
    },
    {
      keepsLogs: true,
      handleMany: async (outcomes) => {
        for (const o of outcomes) {
          keep(o, 'together');
          if (batchPoisoned.has(o.jobId)) throw new Error('this outcome cannot be recorded');
        }
      },
    },
  );
  const [a, b, c] = await dispatchedJobs(3);
  const at = new Date().toISOString();
  const sent = (id: string) => ({
    logs: [
      { at, level: 'info', text: `connecting ${id}` },
      { at, level: 'warn', text: `slow ${id}` },
    ],
  });
  await answer([a, b], sent);
  await tc.services.jobs.wait([a, b], 30_000);
  // c's batch fails together: recorded alone, its lines still handed over once.
  batchPoisoned.add(c);
  await answer([c], sent);
  await tc.services.jobs.wait([a, b, c], 30_000);
  expect(kept.get(a)).toEqual([`info connecting ${a}`, `warn slow ${a}`, 'together']);
  expect(kept.get(b)).toEqual([`info connecting ${b}`, `warn slow ${b}`, 'together']);
  expect(kept.get(c)).toEqual([`info connecting ${c}`, `warn slow ${c}`, 'alone']);
  expect(await tc.db('job_logs').whereIn('job_id', [a, b, c]).select('text')).toEqual([]);
});
