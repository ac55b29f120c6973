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
 * Why a heartbeat's signed time is refused before it is recorded, or null. On a NATS without
 * per-agent accounts anybody can read a signed heartbeat and send it again, which kept a dead
 * agent online (and its pool's jobs sent to nobody): a heartbeat is taken only within
 * HEARTBEAT_SKEW_MS of this clock, and (checked by the statement that records it, so on every
 * replica and after restarts) only when later than the last one taken from the agent.
 */
export function beatTimeProblem(at: string, now = Date.now()): string | null {
  if (Math.abs(Date.parse(at) - now) <= HEARTBEAT_SKEW_MS) return null;
  return `heartbeat time ${at} is more than ${HEARTBEAT_SKEW_MS / 60_000} minutes from the controller's clock (${new Date(now).toISOString()})`;
}

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
    const skewed = beatTimeProblem(beat.at);
    if (skewed) throw new Error(skewed);
    const taken = await agents.heartbeat(v.agent.id, new Date(beat.at), {
      version: beat.version,
      capabilities: beat.capabilities,
      active_jobs: beat.active_jobs,
      max_jobs: beat.max_jobs,
      pending_events: beat.pending_events,
      health: beat.health ?? null,
    });
    if (!taken) throw new Error(`heartbeat time ${beat.at} is not later than the last heartbeat taken (a copy sent again?)`);
    const previous = taken.previousSeenAt;
    if (!previous || Date.now() - previous.getTime() > live.offlineMs) onOnline?.({ ...v.agent, version: beat.version });
    return { ...reply, agent_id: v.agent.id, ok: true, revoked: false, error: null };
  } catch (err) {
    return { ...reply, agent_id: v.agent.id, ok: false, revoked: false, error: (err as Error).message };
  }
}
