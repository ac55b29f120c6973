import websocket from '@fastify/websocket';
import type { FastifyInstance } from 'fastify';
import type { AuthContext } from '../auth/auth-service';
import type { LiveEvent } from './hub';

/** How long a connection may stay without authenticating, and how often a token is re-checked. */
const AUTH_WINDOW_MS = 10_000;
const RECHECK_MS = 60_000;
/** Messages waiting in a slow client's socket before events are dropped for it. */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

/** The parts of a ws socket used here (ws ships no type definitions in this install). */
interface LiveSocket {
  readonly readyState: number;
  readonly OPEN: number;
  readonly bufferedAmount: number;
  send(data: string): void;
  close(code: number, reason: string): void;
  on(event: 'message', listener: (data: Buffer) => void): void;
  on(event: 'close', listener: () => void): void;
}

interface Filter {
  types: Set<string> | null;
  deployments: Set<string> | null;
  snapshots: Set<string> | null;
}

function wanted(event: LiveEvent, filter: Filter): boolean {
  if (filter.types && !filter.types.has(event.type)) return false;
  if (event.type === 'agent' || event.type === 'backup') return true;
  if (event.type === 'snapshot') return !filter.snapshots || filter.snapshots.has(String(event.id));
  const deploymentId = String(event.type === 'deployment' ? event.id : event.deployment_id);
  return !filter.deployments || filter.deployments.has(deploymentId);
}

function bearer(header: string | undefined): string | null {
  const match = header ? /^Bearer\s+(\S+)$/i.exec(header) : null;
  return match ? match[1] : null;
}

/**
 * GET /api/live (WebSocket): deployment and snapshot status changes and deployment log lines of
 * the caller's organization, as they are committed, backup job progress (type "backup") and
 * agent status changes (type "agent"). Authenticate with an Authorization: Bearer
 * header, or (browsers) with a first message {"type":"auth","token":"<access token>"}; tokens in
 * URLs are not accepted (they end up in logs). Then optionally narrow with
 * {"type":"subscribe","deployments":[ids],"snapshots":[ids],"types":[...]}.
 */
export async function liveRoutes(parent: FastifyInstance): Promise<void> {
  const { services } = parent;
  await parent.register(websocket, { options: { maxPayload: 64 * 1024 } });
  const hub = services.live;

  parent.get(
    '/live',
    {
      websocket: true,
      // Authenticated here, not by the auth hook: browsers cannot send headers on a WebSocket.
      config: { public: true },
      schema: {
        tags: ['live'],
        summary: 'Live progress (WebSocket): deployment and snapshot status changes, log lines and agent status changes of your organization',
        hide: false,
      },
    },
    (socket: LiveSocket, request) => {
      let auth: AuthContext | null = null;
      let token: string | null = null;
      let unsubscribe: (() => void) | null = null;
      const filter: Filter = { types: null, deployments: null, snapshots: null };
      const send = (message: Record<string, unknown>) => {
        if (socket.readyState === socket.OPEN && socket.bufferedAmount < MAX_BUFFERED_BYTES) socket.send(JSON.stringify(message));
      };
      const close = (code: number, reason: string) => {
        send({ type: 'error', error: reason });
        socket.close(code, reason);
      };

      const authenticate = async (candidate: string) => {
        const context = await services.auth.authenticate(candidate).catch(() => null);
        if (!context) return close(4401, 'Invalid or expired token');
        if (!context.permissions.includes('devices.access')) return close(4403, 'Insufficient permissions');
        auth = context;
        token = candidate;
        clearTimeout(deadline);
        unsubscribe = hub.subscribe(context.orgId, (event) => {
          if (wanted(event, filter)) {
            const { org_id: _org, ...rest } = event;
            send(rest);
          }
        });
        await hub.watching(context.orgId);
        send({ type: 'ready', org_id: context.orgId, username: context.username });
      };

      const deadline = setTimeout(() => {
        if (!auth) close(4401, 'Authentication required: send {"type":"auth","token":"<access token>"} first');
      }, AUTH_WINDOW_MS);
      const recheck = setInterval(async () => {
        if (!token) return;
        const still = await services.auth.authenticate(token).catch(() => null);
        if (!still || still.orgId !== auth?.orgId) close(4401, 'Invalid or expired token');
      }, RECHECK_MS);
      recheck.unref();

      socket.on('message', (data: Buffer) => {
        let message: { type?: unknown; token?: unknown; deployments?: unknown; snapshots?: unknown; types?: unknown };
        try {
          message = JSON.parse(String(data));
        } catch {
          return send({ type: 'error', error: 'Messages are JSON objects' });
        }
        if (!auth) {
          if (message.type === 'auth' && typeof message.token === 'string') return void authenticate(message.token);
          return close(4401, 'Authentication required: send {"type":"auth","token":"<access token>"} first');
        }
        if (message.type === 'subscribe') {
          const ids = (value: unknown) => (Array.isArray(value) ? new Set(value.map(String)) : null);
          filter.deployments = ids(message.deployments);
          filter.snapshots = ids(message.snapshots);
          filter.types = ids(message.types);
          return send({
            type: 'subscribed',
            deployments: message.deployments ?? null,
            snapshots: message.snapshots ?? null,
            types: message.types ?? null,
          });
        }
        if (message.type === 'ping') return send({ type: 'pong' });
        return send({ type: 'error', error: `Unknown message type ${JSON.stringify(message.type)}` });
      });
      socket.on('close', () => {
        clearTimeout(deadline);
        clearInterval(recheck);
        unsubscribe?.();
      });

      const header = bearer(request.headers.authorization);
      if (header) void authenticate(header);
    },
  );
}
