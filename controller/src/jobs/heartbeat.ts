/**
 * An agent's heartbeat, recorded, and the reply that tells it how often to beat — or, when its
 * signature was refused, why (a revoked or unknown agent stops and says so).
 */
import { Heartbeat, PROTOCOL_VERSION, checkMessage, type HeartbeatReply } from '../../../shared/src/jobs/messages';
import type { AgentDirectory, Liveness } from './ports';
import type { Verified } from './agent-signers';

/** Told when a heartbeat comes from an agent that was offline (or never seen): it is coming online. */
export type OnlineListener = (agent: { id: string; name: string; org_id: string; site_id: string | null; version: string }) => void;

export async function answerHeartbeat(
  kid: string | null,
  v: Verified,
  live: Liveness,
  agents: AgentDirectory,
  onOnline?: OnlineListener,
): Promise<HeartbeatReply> {
  const reply = { v: PROTOCOL_VERSION, heartbeat_interval_ms: live.heartbeatMs } as const;
  if (!('payload' in v)) {
    const revoked = Boolean(v.agent?.revoked_at) || v.refused.startsWith('unknown agent');
    return { ...reply, agent_id: kid ?? '', ok: false, revoked, error: v.refused };
  }
  try {
    const beat = checkMessage(Heartbeat, v.payload, 'heartbeat');
    if (beat.agent_id !== v.agent.id) throw new Error('agent_id does not match the signer');
    const previous = await agents.heartbeat(v.agent.id, {
      version: beat.version,
      capabilities: beat.capabilities,
      active_jobs: beat.active_jobs,
      max_jobs: beat.max_jobs,
      pending_events: beat.pending_events,
      health: beat.health ?? null,
    });
    if (!previous || Date.now() - previous.getTime() > live.offlineMs) onOnline?.({ ...v.agent, version: beat.version });
    return { ...reply, agent_id: v.agent.id, ok: true, revoked: false, error: null };
  } catch (err) {
    return { ...reply, agent_id: v.agent.id, ok: false, revoked: false, error: (err as Error).message };
  }
}
