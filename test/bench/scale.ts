/**
 * Scale benchmark (`npm run bench -- scale --agents 20 --devices 5000`).
 *
 * Everything as separate processes, as in production: a controller (`npm run controller`) on a
 * fresh PostgreSQL database, its own nats-server with JetStream and the monitoring port, the
 * SSH simulator (`npm run sim`) with one loopback address per device, and `--agents` agent
 * processes spread over `--sites` sites (devices assigned to the sites round robin). One
 * snapshot over every device; the clock runs from POST .../collect to the snapshot's end.
 *
 * Prints: devices per second; jobs per agent and per site (the spread); controller CPU
 * seconds, average cores and RSS (now and peak) from /proc; the agents' and simulator's CPU for
 * context; NATS messages and bytes in and out during the snapshot (/varz).
 *
 * Options: --agents N (20), --devices N (5000), --sites N (5), --concurrency N per agent (32), --warmup-rounds N (1): untimed
 * snapshots over every device first; --no-floor skips the pipeline floor.
 *
 * Then, with the controller and agents stopped, the pipeline floor (pipeline-floor.ts) over the same
 * devices with as many agent processes and sessions: the same pulls on the batched protocol and
 * nothing else, the least this machine allows for the snapshot (after one warm-up round).
 * Targets (2-core machine): the whole snapshot ≤ 60 s; controller RSS ≤ 400 MB.
 */
import { loadavg } from 'node:os';
import { connect, type JetStreamManager } from 'nats';
import { createDb } from '../../controller/src/db/knex';
import setupTemplate from '../helpers/global-setup';
import { createTestDatabase } from '../helpers/postgres';
import { startAgentProcess, startControllerProcess, startNats, stopAll, waitUntil, type AgentProcess, type Proc } from '../helpers/processes';
import { option } from './controller';
import { cpuOfNamed, sum, usage } from './cpu';
import { connectSlotsOf, simTargets, startSshSim } from './fleet';
import { pipelineFloor, pipelineFloorReport } from './pipeline-floor';

const DEVICE_LOGIN = { username: 'netops', password: 'scale-Device-pw' };
const ADMIN_PASSWORD = 'scale-admin-password';
const METRICS_TOKEN = 'scale-bench-metrics-token-0123';
const mb = (n: number) => `${n.toFixed(0)} MB`;

function spread(counts: number[]): string {
  const sorted = [...counts].sort((a, b) => a - b);
  const mean = sum(sorted) / Math.max(1, sorted.length);
  const sd = Math.sqrt(sum(sorted.map((c) => (c - mean) ** 2)) / Math.max(1, sorted.length));
  const median = sorted[Math.floor(sorted.length / 2)] ?? 0;
  return (
    `min ${sorted[0] ?? 0}, median ${median}, max ${sorted.at(-1) ?? 0}, mean ${mean.toFixed(1)}, stddev ${sd.toFixed(1)} ` +
    `(${mean ? ((sd / mean) * 100).toFixed(0) : 0}% of the mean)`
  );
}

/** Messages ever stored in the job and result streams (their last sequence numbers). */
async function streamMessages(jsm: JetStreamManager): Promise<{ jobs: number; events: number }> {
  const last = async (stream: string) => (await jsm.streams.info(stream)).state.last_seq;
  return { jobs: await last('SB_JOBS'), events: await last('SB_RESULTS') };
}

async function json(res: Promise<Response>, what: string): Promise<any> {
  const r = await res;
  const text = await r.text();
  if (!r.ok) throw new Error(`${what}: HTTP ${r.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

export async function run(args: string[] = []): Promise<void> {
  const agentCount = option(args, 'agents', 20);
  const devices = option(args, 'devices', 5000);
  const siteCount = Math.min(option(args, 'sites', 5), agentCount);
  const concurrency = option(args, 'concurrency', 32);
  const warmupRounds = option(args, 'warmup-rounds', 1);
  const log = (text: string) => console.log(`[scale ${new Date().toISOString().slice(11, 19)}] ${text}`);

  await setupTemplate();
  const database = await createTestDatabase();
  const db = await createDb(database.url, '/tmp');
  let sim: Proc | null = null;
  try {
    const nats = await startNats({ monitor: true });
    const ctl = await startControllerProcess({
      databaseUrl: database.url,
      natsUrl: nats.url,
      natsPrefix: 'sb',
      adminPassword: ADMIN_PASSWORD,
      metricsToken: METRICS_TOKEN,
      logLevel: 'warn',
    });
    const call = (method: string, path: string, token: string | null, body?: unknown, type = 'application/json') =>
      json(
        fetch(ctl.url + path, {
          method,
          headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': type } : {}) },
          body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
        }),
        `${method} ${path}`,
      );
    log(`controller pid ${ctl.pid} at ${ctl.url}; NATS ${nats.url}`);

    // Simulated devices, one loopback address each, in their own process.
    const fleet = await startSshSim(devices, DEVICE_LOGIN);
    sim = fleet.proc;
    const { port: simPort, csv } = fleet;
    log(`simulator pid ${sim.pid}: ${devices} devices on port ${simPort}`);

    const { access_token: token } = await call('POST', '/api/auth/login', null, { username: 'admin', password: ADMIN_PASSWORD });
    const profile = await call('POST', '/api/profiles', token, { name: 'scale', ...DEVICE_LOGIN, ssh_port: simPort });
    const imported = await call('POST', `/api/devices/import/csv?profile_id=${profile.id}`, token, csv, 'text/csv');
    if (imported.imported !== devices) throw new Error(`import stored ${imported.imported} of ${devices} devices`);
    const ids: string[] = (await db('devices').orderBy('name').select('id')).map((r: { id: string }) => r.id);
    const sites: { id: string; name: string }[] = [];
    for (let s = 0; s < siteCount; s++) {
      const site = await call('POST', '/api/sites', token, { name: `scale-site-${s + 1}` });
      sites.push(site);
      await call('PATCH', '/api/devices/bulk', token, { ids: ids.filter((_, i) => i % siteCount === s), fields: { site_id: site.id } });
    }

    log(`starting ${agentCount} agents in ${siteCount} sites (concurrency ${concurrency} each)`);
    const started: (AgentProcess & { id: string; site: string })[] = [];
    // A few at a time: twenty Node processes loading at once on two cores take minutes.
    for (let i = 0; i < agentCount; i += 5) {
      const batch = Array.from({ length: Math.min(5, agentCount - i) }, async (_, k) => {
        const site = sites[(i + k) % siteCount];
        const created = await call('POST', '/api/agents', token, { name: `scale-agent-${i + k + 1}`, site_id: site.id });
        const proc = await startAgentProcess({
          natsUrl: nats.url,
          controllerUrl: ctl.url,
          enrollToken: created.enrollment_token,
          concurrency,
          metricsToken: METRICS_TOKEN,
          logLevel: 'warn',
          readyTimeoutMs: 300_000,
        });
        return Object.assign(proc, { id: created.id as string, site: site.name });
      });
      started.push(...(await Promise.all(batch)));
    }
    await waitUntil(
      'every agent online',
      async () => (await call('GET', '/api/agents', token)).agents.filter((a: { status: string }) => a.status === 'online').length >= agentCount,
      undefined,
      120_000,
    );
    log('all agents online');

    // The snapshot.
    /** One snapshot over every device; `collect` runs it and answers it once it has ended. */
    const snapshot = async (name: string) => {
      const snap = (await call('POST', '/api/devices/snapshots', token, { name, device_filter: {} })).snapshot;
      return {
        id: snap.id as string,
        collect: async () => {
          await call('POST', `/api/devices/snapshots/${snap.id}/collect`, token, { timeout_seconds: 900 });
          for (;;) {
            const s = (await call('GET', `/api/devices/snapshots/${snap.id}`, token)).snapshot;
            if (s.status !== 'collecting') return s;
            await new Promise((r) => setTimeout(r, 250));
          }
        },
      };
    };
    /** The agents' job time so far (seconds and jobs, from their /metrics). */
    const agentJobs = async () => {
      const each = await Promise.all(
        started.map(async (a) => {
          const text = await fetch(`${a.healthUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }).then((r) => r.text());
          const value = (name: string) => sum([...text.matchAll(new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, 'gm'))].map((m) => Number(m[1])));
          return { seconds: value('switchboard_agent_job_duration_seconds_sum'), count: value('switchboard_agent_job_duration_seconds_count') };
        }),
      );
      return { seconds: sum(each.map((a) => a.seconds)), count: sum(each.map((a) => a.count)) };
    };
    // Warm-up, not timed: agents run for months, so the timed snapshot meets every process warm (JIT), as in the other benchmarks.
    for (let i = 1; i <= warmupRounds; i++) {
      const warm = await (await snapshot(`scale warm-up ${i}`)).collect();
      log(`warm-up snapshot ${i}: ${warm.status}, ${warm.successful_devices} succeeded, ${warm.failed_devices} failed`);
    }
    const jobs0 = await agentJobs();
    const snap = await snapshot('scale');
    const varz0 = await nats.varz();
    const cpu0 = usage(ctl.pid);
    const natsPid = nats.proc()?.pid ?? 0;
    const others0 = {
      agents: sum(started.map((a) => usage(a.pid).cpu)),
      sim: usage(sim.pid).cpu,
      nats: usage(natsPid).cpu,
      pg: cpuOfNamed('postgres'),
    };
    let rssPeakDuring = cpu0.rssMb;
    const sampler = setInterval(() => (rssPeakDuring = Math.max(rssPeakDuring, usage(ctl.pid).rssMb)), 250);
    // Where work waits: results not yet recorded by the controller, jobs not yet taken by agents.
    const nc = await connect({ servers: nats.url });
    const jsm = await nc.jetstreamManager();
    const backlog = { results: 0, jobs: 0 };
    const watcher = setInterval(() => {
      void (async () => {
        const results = await jsm.consumers.info('SB_RESULTS', 'controller').catch(() => null);
        if (results) backlog.results = Math.max(backlog.results, results.num_pending + results.num_ack_pending);
        let jobs = 0;
        for await (const c of jsm.consumers.list('SB_JOBS')) jobs += c.num_pending;
        backlog.jobs = Math.max(backlog.jobs, jobs);
      })().catch(() => undefined);
    }, 1_000);
    const messages0 = await streamMessages(jsm);
    const t0 = performance.now();
    const done = await snap.collect();
    const seconds = (performance.now() - t0) / 1000;
    clearInterval(sampler);
    clearInterval(watcher);
    const messages1 = await streamMessages(jsm);
    await nc.close();
    const jobs1 = await agentJobs();
    const cpu1 = usage(ctl.pid);
    const varz1 = await nats.varz();
    const others1 = {
      agents: sum(started.map((a) => usage(a.pid).cpu)),
      sim: usage(sim.pid).cpu,
      nats: usage(natsPid).cpu,
      pg: cpuOfNamed('postgres'),
    };
    const failures = (await db('jobs')
      .where({ group_id: snap.id, status: 'failed' })
      .select('error')
      .count('* as n')
      .groupBy('error')
      .orderBy('n', 'desc')
      .limit(5)) as unknown as { error: string; n: number }[];

    const perAgent: { agent_id: string; n: number }[] = await db('jobs')
      .where({ group_id: snap.id })
      .whereNotNull('agent_id')
      .select('agent_id')
      .count('* as n')
      .groupBy('agent_id');
    const counts = new Map(perAgent.map((r) => [r.agent_id, Number(r.n)]));
    const agentCounts = started.map((a) => counts.get(a.id) ?? 0);
    const siteCounts = sites.map((s) => sum(started.filter((a) => a.site === s.name).map((a) => counts.get(a.id) ?? 0)));
    const [p] = (
      await db.raw(
        `SELECT extract(epoch FROM max(dispatched_at) - min(created_at)) AS dispatched,
                extract(epoch FROM min(started_at) - min(created_at)) AS first_start,
                extract(epoch FROM max(started_at) - min(created_at)) AS last_start,
                extract(epoch FROM max(finished_at) - min(created_at)) AS last_final,
                extract(epoch FROM percentile_cont(0.5) WITHIN GROUP (ORDER BY finished_at - started_at)) AS run_p50,
                extract(epoch FROM percentile_cont(0.95) WITHIN GROUP (ORDER BY finished_at - started_at)) AS run_p95,
                count(*) FILTER (WHERE finished_at - started_at > interval '2 seconds') AS over_2s
           FROM jobs WHERE group_id = ?`,
        [snap.id],
      )
    ).rows;
    const metrics = await fetch(`${ctl.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }).then((r) => r.text());
    const poolUsed = /switchboard_db_pool_connections\{state="max"\} (\d+)/.exec(metrics)?.[1];

    console.log('');
    console.log(
      `scale benchmark: ${devices} simulated SSH devices, ${agentCount} agent processes × concurrency ${concurrency} in ${siteCount} sites, ` +
        `one controller process, own nats-server`,
    );
    console.log(
      `snapshot: ${done.status}, ${done.successful_devices} succeeded, ${done.failed_devices} failed, in ${seconds.toFixed(1)} s → ` +
        `${(devices / seconds).toFixed(1)} devices/s`,
    );
    const f = (x: unknown) => Number(x).toFixed(1);
    console.log(
      `phases (s from the first job stored): all dispatched ${f(p.dispatched)}, agents started ${f(p.first_start)}–${f(p.last_start)}, last ` +
        `job final ${f(p.last_final)}; from an agent's start to the job recorded final ${f(p.run_p50)} s (p50), ${f(p.run_p95)} s (p95)`,
    );
    console.log(
      `messages on the job streams: ${messages1.jobs - messages0.jobs} job batches, ${messages1.events - messages0.events} agent events ` +
        `(results events of up to 100 results, and progress events noting the ${p.over_2s} jobs that ran over 2 s on an agent)`,
    );
    const agentMean = (jobs1.seconds - jobs0.seconds) / Math.max(1, jobs1.count - jobs0.count);
    console.log(
      `on the agents, a job takes ${agentMean.toFixed(2)} s on average from receipt to published result; most waiting in NATS: ` +
        `${backlog.jobs} jobs not yet taken by an agent, ${backlog.results} results not yet recorded by the controller`,
    );
    console.log(`per agent (jobs): ${spread(agentCounts)}`);
    console.log(`per site (jobs):  ${siteCounts.map((n, i) => `${sites[i].name} ${n}`).join(', ')}`);
    console.log(
      `controller: ${(cpu1.cpu - cpu0.cpu).toFixed(1)} CPU s during the snapshot (${((cpu1.cpu - cpu0.cpu) / seconds).toFixed(2)} cores on ` +
        `average); RSS ${mb(cpu0.rssMb)} before, ${mb(rssPeakDuring)} peak during, ${mb(cpu1.rssMb)} after; process peak (VmHWM) ` +
        `${mb(cpu1.peakMb)}; DB pool max ${poolUsed ?? '?'}`,
    );
    const spent = {
      agents: others1.agents - others0.agents,
      sim: others1.sim - others0.sim,
      nats: others1.nats - others0.nats,
      pg: others1.pg - others0.pg,
      controller: cpu1.cpu - cpu0.cpu,
    };
    console.log(
      `CPU s during the snapshot: agents together ${spent.agents.toFixed(1)}, simulator ${spent.sim.toFixed(1)}, nats-server ` +
        `${spent.nats.toFixed(1)}, PostgreSQL (all its processes) ${spent.pg.toFixed(1)}, controller ${spent.controller.toFixed(1)}; ` +
        `${((sum(Object.values(spent)) * 1000) / devices).toFixed(1)} ms per device in all, ${((spent.agents * 1000) / devices).toFixed(1)} ` +
        `in agents, ${((spent.controller * 1000) / devices).toFixed(1)} in the controller`,
    );
    for (const f of failures) console.log(`failed (${f.n}): ${f.error}`);
    // An agent that took nothing: say what it last logged (warnings and errors), so the spread's cause is on record.
    for (const a of started.filter((x) => !counts.has(x.id)))
      console.log(`agent ${a.id} (pid ${a.pid}, ${a.running ? 'running' : 'exited'}) took no job; its last output:\n${a.output().slice(-3000)}`);
    const d = (k: string) => Number(varz1[k]) - Number(varz0[k]);
    console.log(
      `NATS during the snapshot: ${d('in_msgs')} messages in, ${d('out_msgs')} out; ${(d('in_bytes') / 1e6).toFixed(1)} MB in, ` +
        `${(d('out_bytes') / 1e6).toFixed(1)} MB out; ${varz1.connections} connections; slow consumers ${varz1.slow_consumers}`,
    );
    console.log(
      `machine load average now: ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    console.log(
      `targets: snapshot ≤ 60 s (${seconds <= 60 ? 'met' : 'missed'}: ${seconds.toFixed(1)} s); controller RSS ≤ 400 MB ` +
        `(${cpu1.peakMb <= 400 ? 'met' : 'missed'}: peak ${mb(cpu1.peakMb)})`,
    );
    await Promise.all(started.map((a) => a.stop(30_000)));
    await ctl.stop(30_000);
    if (!args.includes('--no-floor')) {
      const rows = await db('devices').orderBy('name').select('id', 'name', 'host', 'device_type');
      const floor = await pipelineFloor(db, nats.url, simTargets(rows, simPort, DEVICE_LOGIN), {
        work: 'backup',
        agents: agentCount,
        sessions: concurrency,
        connects: connectSlotsOf(concurrency),
        simulatorPid: sim.pid,
        warmupRounds: 1,
      });
      console.log(pipelineFloorReport(floor, null, agentCount));
      console.log(`snapshot / pipeline floor: ${(seconds / floor.seconds).toFixed(2)}`);
    }
    await nats.close();
  } finally {
    await sim?.stop(5_000);
    await stopAll();
    await db.destroy();
    await database.drop().catch(() => undefined);
  }
}
