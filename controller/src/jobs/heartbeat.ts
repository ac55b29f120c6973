/**
 * An agent's heartbeat, recorded, and the reply that tells it how often to beat — or, when its
 * signature was refused, why (a revoked or unknown agent stops and says so).
 */
import { Heartbeat, PROTOCOL_VERSION, checkMessage, type HeartbeatReply } from '../../../shared/src/jobs/messages';
import type { AgentDirectory, Liveness } from './ports';
import type { Verified } from './agent-signers';

/** How far a heartbeat's signed `at` may be from this controller's clock, either way. */
export const HEARTBEAT_SKEW_MS = 5 * 60_000;

/**
 * The signed time of the last heartbeat taken from each agent, on this replica. On a NATS without
 * per-agent accounts anybody can read a signed heartbeat and send it again, which kept a dead
 * agent online (and its pool's jobs sent to nobody): a heartbeat is taken only when its `at` is
 * later than the last one taken and within HEARTBEAT_SKEW_MS of this clock. Another replica
 * keeps its own times, so a copy is taken at most once by each replica, and only while it is
 * less than HEARTBEAT_SKEW_MS old. One entry per agent that signed a heartbeat.
 */
export class HeartbeatTimes {
  private readonly last = new Map<string, number>();

  /** Why the heartbeat is refused, or null when it is taken (its time is then the agent's last). */
  take(agentId: string, at: string, now = Date.now()): string | null {
    const time = Date.parse(at);
    if (!(Math.abs(time - now) <= HEARTBEAT_SKEW_MS))
      return `heartbeat time ${at} is more than ${HEARTBEAT_SKEW_MS / 60_000} minutes from the controller's clock (${new Date(now).toISOString()})`;
    const last = this.last.get(agentId);
    if (last !== undefined && time <= last) return `heartbeat time ${at} is not later than the last heartbeat taken (a copy sent again?)`;
    this.last.set(agentId, time);
    return null;
  }
}

/** Told when a heartbeat comes from an agent that was offline (or never seen): it is coming online. */
export type OnlineListener = (agent: { id: string; name: string; org_id: string; site_id: string | null; version: string }) => void;

export async function answerHeartbeat(
  kid: string | null,
  v: Verified,
  live: Liveness,
  agents: AgentDirectory,
  times: HeartbeatTimes,
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
    const stale = times.take(v.agent.id, beat.at);
    if (stale) throw new Error(stale);
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
