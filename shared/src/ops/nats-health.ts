/**
 * NATS connection health for readiness checks and metrics, the same on controller and agent:
 * counts reconnects from the connection's status stream and answers whether the server
 * answers a ping right now.
 */
import { Events, type NatsConnection } from 'nats';

export interface NatsWatch {
  /** Reconnections since the watch started. */
  readonly reconnects: number;
  /** Disconnections since the watch started. */
  readonly disconnects: number;
  /** False between a disconnect and the following reconnect (and once closed). */
  readonly connected: boolean;
}

/** Follows one connection's status events; `onReconnect` hears each reconnection. */
export function watchNats(nc: NatsConnection, onReconnect?: () => void, onDisconnect?: () => void): NatsWatch {
  const state = { reconnects: 0, disconnects: 0, connected: !nc.isClosed() };
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === Events.Disconnect) {
        state.connected = false;
        state.disconnects += 1;
        onDisconnect?.();
      } else if (status.type === Events.Reconnect) {
        state.connected = true;
        state.reconnects += 1;
        onReconnect?.();
      }
    }
    state.connected = false;
  })().catch(() => {
    state.connected = false;
  });
  return {
    get reconnects() {
      return state.reconnects;
    },
    get disconnects() {
      return state.disconnects;
    },
    get connected() {
      return state.connected && !nc.isClosed();
    },
  };
}

export interface CheckResult {
  ok: boolean;
  /** What failed, in words (never a secret). */
  error?: string;
  /** Round trip in milliseconds when it answered. */
  latency_ms?: number;
}

/** A ping round trip to the NATS server within `timeoutMs`. */
export async function pingNats(nc: NatsConnection | null | undefined, timeoutMs = 2_000): Promise<CheckResult> {
  if (!nc) return { ok: false, error: 'not connected yet' };
  if (nc.isClosed()) return { ok: false, error: 'connection closed' };
  let timer: NodeJS.Timeout | undefined;
  try {
    const rtt = await Promise.race([
      nc.rtt(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return { ok: true, latency_ms: rtt };
  } catch (err) {
    return { ok: false, error: `server unreachable: ${(err as Error).message}` };
  } finally {
    clearTimeout(timer);
  }
}
