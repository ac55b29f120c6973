/**
 * The agents area over the job plane: the agents service (enrollment answers name the plane's
 * NATS subjects and keys) and, in operator mode, the NATS credentials agents renew through the
 * engine's request channel.
 */
import type { Logger } from 'pino';
import { jobsSubject, poolConsumer, resultsSubject } from '../../../shared/src/nats/subjects';
import type { JobEngine, JobPlane } from '../jobs';
import type { AuditService } from '../platform/audit-service';
import type { SettingsService } from '../platform/settings-service';
import { AgentNatsCredentials } from './nats-credentials';
import { AgentsService } from './service';
import type { AgentsStore } from './store';

export function createAgentsPlane(deps: {
  store: AgentsStore;
  engine: JobEngine;
  plane: JobPlane;
  settings: SettingsService;
  audit: AuditService;
  log: Logger;
}): { agents: AgentsService; agentNatsCredentials: AgentNatsCredentials | null } {
  const { store, engine, log } = deps;
  const { names, tunables, controllerKey, authority, nats } = deps.plane;
  const natsCredentials = authority && nats ? new AgentNatsCredentials(authority, names, store, nats, log) : null;
  if (natsCredentials) engine.onRequest('nats_credentials', (agent, payload) => natsCredentials.renew(agent.id, payload));
  const agents = new AgentsService(
    store,
    deps.settings,
    deps.audit,
    {
      controllerKey: controllerKey.publicJwk as Record<string, unknown>,
      nats: (orgId, agentId, pool) => ({
        prefix: names.prefix,
        jobs_stream: names.jobsStream,
        jobs_subject: jobsSubject(names.prefix, orgId, pool),
        jobs_consumer: poolConsumer(orgId, pool),
        results_stream: names.resultsStream,
        results_subject: resultsSubject(names.prefix, agentId),
        heartbeat_subject: names.heartbeatSubject,
        ack_wait_ms: tunables.ackWaitMs,
      }),
    },
    natsCredentials,
  );
  return { agents, agentNatsCredentials: natsCredentials };
}
