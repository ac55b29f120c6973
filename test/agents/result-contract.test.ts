/**
 * The job contract at the controller's door: an agent's result is checked once against its kind's
 * schema (shared/src/jobs/kinds.ts). One that does not fit (an agent of another build, a field
 * renamed on one side) fails the job with the reason, and the kind's recorder stores that
 * failure like any other: a backup becomes a failed config version naming the misfit. Real
 * controller, PostgreSQL and NATS JetStream; the results are signed with an enrolled agent's
 * key and published on its link, as the agent would.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { natsAgentLink } from '../../agent/src/nats-link';
import type { AgentLink } from '../../shared/src/jobs/link';
import { importAgentPrivateKey, type AnyKey } from '../../shared/src/jobs/crypto';
import { startTestController, type TestController } from '../helpers/controller';
import { SHARED_NATS, dropNatsNamespace, enrollAgent, jobRow, makeDevice, makeProfile, natsPrefix, resultsToken, until, type Org } from './helpers';

const prefix = natsPrefix();
let tc: TestController;
let org: Org;
let link: AgentLink;
let agentId: string;
let signKey: AnyKey;
let profileId: string;

beforeAll(async () => {
  tc = await startTestController({ config: { natsUrl: SHARED_NATS, natsPrefix: prefix, jobs: { sweepIntervalMs: 200 } } });
  org = await tc.createOrgUser(['org_admin']);
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

/** One dispatched backup job of a new device. */
async function dispatchedBackup(): Promise<{ jobId: string; deviceId: string }> {
  const deviceId = await makeDevice(tc, org, { profile_id: profileId });
  const [jobId] = await tc.services.jobs.submit([{ orgId: org.orgId, kind: 'backup', deviceId, params: { methods: ['cli'] }, deadlineMs: 60_000 }]);
  await until('the job to be dispatched', async () => (await jobRow(tc, jobId)).status === 'dispatched');
  return { jobId, deviceId };
}

async function answer(jobId: string, result: Record<string, unknown>): Promise<void> {
  await link.publish(await resultsToken(signKey, agentId, [{ job_id: jobId, result }]), `${jobId}:1:${agentId}:results`);
}

it('fails a job whose result does not fit its kind, and the recorder stores the failure with the reason', async () => {
  const { jobId, deviceId } = await dispatchedBackup();
  // A renamed field: `configuration` where the contract says `config`, and no transcript.
  await answer(jobId, { results: [{ method: 'cli', configuration: { text: 'hostname r1\n', format: 'cli', via: 'ssh' } }], transcriptText: '' });
  const [outcome] = await tc.services.jobs.wait([jobId], 30_000);
  expect(outcome).toMatchObject({ status: 'failed', result: null });
  expect(outcome.error).toMatch(/backup result does not fit the job contract \(\/transcript/);
  const versions = await tc.db('config_versions').where({ org_id: org.orgId, device_id: deviceId }).select('status', 'error_message', 'job_id');
  expect(versions).toEqual([{ status: 'failed', error_message: outcome.error, job_id: jobId }]);
});

it('records a result that fits as before', async () => {
  const { jobId, deviceId } = await dispatchedBackup();
  await answer(jobId, { results: [{ method: 'cli', config: { text: 'hostname r2\n', format: 'cli', via: 'ssh' } }], transcript: '' });
  const [outcome] = await tc.services.jobs.wait([jobId], 30_000);
  expect(outcome.status).toBe('succeeded');
  const versions = await tc.db('config_versions').where({ org_id: org.orgId, device_id: deviceId }).select('status', 'config_text');
  expect(versions).toEqual([{ status: 'success', config_text: 'hostname r2\n' }]);
});
