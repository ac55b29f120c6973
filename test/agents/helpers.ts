/**
 * Helpers of the agents suites: inventory set-up through the API, enrolled agents run inside the
 * test process, and polling without timed assertions. Real processes (agents, controllers,
 * nats-server) and free ports come from test/helpers/processes.ts and test/helpers/net.ts.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { connect } from 'nats';
import { AgentRuntime } from '../../agent/src/runtime';
import { DRIVERS, type DriverRegistry } from '../../agent/src/drivers';
import type { SessionLimits } from '../../agent/src/drivers/types';
import { enroll, type AgentIdentity } from '../../agent/src/identity';
import { natsAgentLink } from '../../agent/src/nats-link';
import type { InProcessHub } from '../../shared/src/jobs/inprocess';
import { AGENT_SIGN_ALG, signJsonDetached, type AnyKey } from '../../shared/src/jobs/crypto';
import type { AgentLink } from '../../shared/src/jobs/link';
import { ALLOWED_NETWORKS_GUARD, PROTOCOL_VERSION, type JobBatch } from '../../shared/src/jobs/messages';
import { deleteStreams } from '../../shared/src/nats/jetstream';
import { natsNames } from '../../shared/src/nats/subjects';
import type { TestController } from '../helpers/controller';

export const SHARED_NATS = process.env.SWITCHBOARD_TEST_NATS ?? 'nats://127.0.0.1:4222';
const quiet = pino({ level: process.env.TEST_AGENT_LOG ?? 'silent' });

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until fn answers something truthy; fails with `what` after `timeoutMs` (a guard, not an assertion on timing). */
export async function until<T>(
  what: string,
  fn: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs = 30_000,
  everyMs = 100,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await fn();
      if (value) return value as T;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`);
    await sleep(everyMs);
  }
}

export const natsPrefix = () => `t${randomBytes(5).toString('hex')}`;

/** Removes a test's streams from a NATS server. */
export async function dropNatsNamespace(url: string, prefix: string): Promise<void> {
  const nc = await connect({ servers: url });
  try {
    await deleteStreams(await nc.jetstreamManager(), natsNames(prefix));
  } finally {
    await nc.close();
  }
}

// ---- inventory ----------------------------------------------------------------------------

/** What the inventory helpers need of a controller: its URL and an API client. */
export type Api = Pick<TestController, 'url' | 'request'>;

export interface Org {
  orgId: string;
  token: string;
}

async function ok<T = any>(res: Promise<{ status: number; body: any; text: string }>, status: number, what: string): Promise<T> {
  const r = await res;
  if (r.status !== status) throw new Error(`${what}: HTTP ${r.status} ${r.text}`);
  return r.body as T;
}

export async function makeSite(tc: Api, org: Org, name = `site-${randomBytes(3).toString('hex')}`): Promise<{ id: string; name: string }> {
  return ok(tc.request('POST', '/api/sites', { token: org.token, body: { name } }), 201, 'create site');
}

export async function makeProfile(tc: Api, org: Org, body: Record<string, unknown> = {}): Promise<string> {
  const profile = await ok(
    tc.request('POST', '/api/profiles', {
      token: org.token,
      body: { name: `p-${randomBytes(3).toString('hex')}`, username: 'admin', password: 'admin', ...body },
    }),
    201,
    'create profile',
  );
  return profile.id;
}

export async function makeDevice(
  tc: Api,
  org: Org,
  fields: { host?: string; port?: number; profile_id?: string; site_id?: string | null; device_type?: string; name?: string; password?: string },
): Promise<string> {
  const profileId =
    fields.profile_id ?? (await makeProfile(tc, org, { ssh_port: fields.port ?? 22, ...(fields.password ? { password: fields.password } : {}) }));
  const device = await ok(
    tc.request('POST', '/api/devices', {
      token: org.token,
      body: {
        name: fields.name ?? `dev-${randomBytes(4).toString('hex')}`,
        host: fields.host ?? '127.0.0.1',
        device_type: fields.device_type ?? 'vendor_ios',
        profile_id: profileId,
        ...(fields.site_id ? { site_id: fields.site_id } : {}),
      },
    }),
    201,
    'create device',
  );
  return device.id;
}

/** Creates an agent through the API and redeems its token; the identity is saved in a temp state dir. */
export async function enrollAgent(
  tc: Api,
  org: Org,
  /** `capabilities`: what the agent says it can do at enrollment (an agent of this version's by default). */
  opts: { name?: string; site_id?: string | null; stateDir?: string; capabilities?: string[] } = {},
): Promise<{ identity: AgentIdentity; stateDir: string; token: string }> {
  const created = await ok(
    tc.request('POST', '/api/agents', {
      token: org.token,
      body: { name: opts.name ?? `agent-${randomBytes(3).toString('hex')}`, site_id: opts.site_id ?? null },
    }),
    201,
    'create agent',
  );
  const stateDir = opts.stateDir ?? mkdtempSync(join(tmpdir(), 'sb-agent-'));
  const identity = await enroll(
    {
      controllerUrl: tc.url,
      enrollToken: created.enrollment_token,
      natsUrl: SHARED_NATS,
      stateDir,
      concurrency: 8,
      connectConcurrency: 8,
      logLevel: 'silent',
    },
    'test',
    opts.capabilities ?? ['job:backup', 'job:test_credential', 'transport:ssh', ALLOWED_NETWORKS_GUARD],
  );
  return { identity, stateDir, token: created.enrollment_token };
}

/** An agent runtime inside the test process, over the controller's in-process hub or over NATS. */
export async function startAgent(
  tc: TestController,
  identity: AgentIdentity,
  opts: {
    natsUrl?: string | null;
    drivers?: DriverRegistry;
    concurrency?: number;
    onRevoked?: (reason: string) => void;
    limits?: Partial<SessionLimits>;
    takenJobsFile?: string;
  } = {},
): Promise<{ runtime: AgentRuntime; link: AgentLink; stop(): Promise<void> }> {
  const link = opts.natsUrl
    ? await natsAgentLink(opts.natsUrl, identity)
    : (tc.services.jobEngine.transport as InProcessHub).link(identity.org_id, identity.pool);
  const runtime = new AgentRuntime({
    identity,
    link,
    drivers: opts.drivers ?? DRIVERS,
    concurrency: opts.concurrency ?? 8,
    connectConcurrency: opts.concurrency ?? 8,
    version: 'test',
    log: quiet,
    onRevoked: opts.onRevoked,
    limits: opts.limits,
    takenJobsFile: opts.takenJobsFile,
  });
  await runtime.start();
  return { runtime, link, stop: () => runtime.stop(2_000) };
}

/** An API client for a controller running in another process. */
export function apiClient(url: string): Api {
  return {
    url,
    async request(method: string, path: string, opts: { token?: string | null; body?: unknown } = {}) {
      const headers: Record<string, string> = {};
      if (opts.token) headers.authorization = `Bearer ${opts.token}`;
      if (opts.body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(url + path, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
      const text = await res.text();
      const body = (res.headers.get('content-type') ?? '').includes('json') && text ? JSON.parse(text) : text;
      return { status: res.status, body, text, headers: res.headers };
    },
  } as Api;
}

/** Rows of a job, straight from the database. */
export async function jobRow(tc: { db: TestController['db'] }, id: string): Promise<any> {
  return tc.db('jobs').where({ id }).first();
}

/**
 * A `results` event as an agent sends it (detached JWS, signed with `sign` as `agentId`): one
 * entry per job, each a successful test_credential result unless the entry says otherwise.
 */
export async function resultsToken(sign: AnyKey, agentId: string, results: ({ job_id: string } & Record<string, unknown>)[]): Promise<string> {
  const now = new Date().toISOString();
  const entries = results.map((r) => ({
    attempt: 1,
    status: 'succeeded',
    error: null,
    result: { ok: true, message: 'login ok', transports: [] },
    started_at: now,
    finished_at: now,
    logs: [],
    host_key: null,
    gnmi_cert: null,
    ...r,
  }));
  return signJsonDetached({ v: PROTOCOL_VERSION, type: 'results', agent_id: agentId, results: entries }, sign, AGENT_SIGN_ALG, agentId);
}

/** The job batch inside a controller-signed (compact) token, read without verifying it. */
export function batchOf(token: string): JobBatch {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8')) as JobBatch;
}

/** Takes the next job batch off `link` (acked: no agent runs it) and answers its token. */
export function takeBatch(link: AgentLink): Promise<string> {
  return until('a job batch', async () => {
    let got: string | undefined;
    await link.pull(1, 500, (m) => {
      got = m.token;
      m.ack();
    });
    return got;
  });
}
