import websocket from '@fastify/websocket';
import type { FastifyInstance } from 'fastify';
import type { AuthContext } from '../auth/auth-service';
import { HeldCounts, LIVE_LIMITS, TOO_MANY_CODE } from './connection-limits';
import type { LiveEvent } from './hub';

/**
 * How long a connection may stay without authenticating, and how often its token, session and
 * permissions are checked again (besides at once when the hub hears they changed).
 */
const AUTH_WINDOW_MS = 10_000;
/** How long a closed connection's client has to answer the close before its socket is dropped. */
const CLOSE_GRACE_MS = 1_000;
const RECHECK_MS = 60_000;
/** What the stream needs, on connecting and for as long as it stays open. */
const STREAM_PERMISSION = 'devices.access';
/** Messages waiting in a slow client's socket before events are dropped for it. */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

/** The parts of a ws socket used here (ws ships no type definitions in this install). */
interface LiveSocket {
  readonly readyState: number;
  readonly OPEN: number;
  readonly bufferedAmount: number;
  send(data: string): void;
  close(code: number, reason: string): void;
  terminate(): void;
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

interface Message {
  type?: unknown;
  token?: unknown;
  deployments?: unknown;
  snapshots?: unknown;
  types?: unknown;
}

/**
 * The message, or null unless it is a JSON object: reading a field of JSON null would throw out of
 * the socket's handler, an uncaught exception that ends the process.
 */
function parseMessage(data: Buffer): Message | null {
  try {
    const value: unknown = JSON.parse(String(data));
    return typeof value === 'object' && value !== null ? (value as Message) : null;
  } catch {
    return null;
  }
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
 * {"type":"subscribe","deployments":[ids],"snapshots":[ids],"types":[...]}. The connection stays
 * open only while the caller may have it: it closes with 4401 once the session ends (logout,
 * revocation, a disabled user, a replaced terminal session) and with 4403 once the user no longer
 * holds devices.access, checked at once when any replica announces the change and every
 * RECHECK_MS in any case.
 */
export async function liveRoutes(parent: FastifyInstance): Promise<void> {
  const { services } = parent;
  await parent.register(websocket, { options: { maxPayload: 64 * 1024 } });
  const hub = services.live;
  const waitingByAddress = new HeldCounts();
  const streamsByUser = new HeldCounts();

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
      let unwatchAccess: (() => void) | null = null;
      // Set as authentication starts, not when it ends: a second auth racing the first would subscribe twice.
      let authenticating = false;
      let closed = false;
      // Each connection holds one place in its limit until its socket is gone: while it waits, its
      // address's; once authenticated, its user's.
      let releasePlace: () => void = () => {};
      const filter: Filter = { types: null, deployments: null, snapshots: null };
      const send = (message: Record<string, unknown>) => {
        if (socket.readyState === socket.OPEN && socket.bufferedAmount < MAX_BUFFERED_BYTES) socket.send(JSON.stringify(message));
      };
      /** Drops the subscription and the access watcher, if any; safe to call again. */
      const release = () => {
        unsubscribe?.();
        unwatchAccess?.();
        unsubscribe = null;
        unwatchAccess = null;
      };
      const close = (code: number, reason: string) => {
        if (closed) return;
        closed = true;
        // Nothing more goes out once the connection is refused, even before the close completes.
        release();
        send({ type: 'error', error: reason });
        socket.close(code, reason);
        // A client that never answers the close would keep its socket (and its place) for ws's 30 s.
        setTimeout(() => socket.terminate(), CLOSE_GRACE_MS).unref();
      };
      /** Why this caller may not (or may no longer) have the stream: null when they may. */
      const refusal = (context: AuthContext | null): [number, string] | null => {
        if (!context || (auth && context.orgId !== auth.orgId)) return [4401, 'Invalid or expired token'];
        if (!context.permissions.includes(STREAM_PERMISSION)) return [4403, 'Insufficient permissions'];
        return null;
      };

      const authenticate = async (candidate: string) => {
        authenticating = true;
        const context = await services.auth.authenticate(candidate).catch(() => null);
        const refused = refusal(context);
        if (refused) return close(...refused);
        if (!context || closed) return; // the client left while its token was checked
        const stream = streamsByUser.take(context.userId, LIVE_LIMITS.streamsPerUser);
        if (!stream) return close(TOO_MANY_CODE, `Too many live streams for this user (${LIVE_LIMITS.streamsPerUser}): close some first`);
        releasePlace();
        releasePlace = stream;
        auth = context;
        token = candidate;
        clearTimeout(deadline);
        listen(context);
        await hub.watching(context.orgId);
        send({ type: 'ready', org_id: context.orgId, username: context.username });
      };

      const listen = (context: AuthContext) => {
        // Never replace a subscription silently: one left behind would keep this replica watching for good.
        release();
        unsubscribe = hub.subscribe(context.orgId, (event) => {
          if (wanted(event, filter)) {
            const { org_id: _org, ...rest } = event;
            send(rest);
          }
        });
        // Logout, a revoked session, a disabled user or changed roles: checked at once, on any replica.
        unwatchAccess = hub.watchAccess(context.userId, () => void recheck());
      };

      /**
       * The token, its session and the user's permissions as they are now: a connection whose
       * session ended closes with 4401, one whose user lost devices.access with 4403.
       */
      const recheck = async () => {
        if (!token || closed) return;
        const still = await services.auth.authenticate(token).catch(() => null);
        const refused = refusal(still);
        if (refused) close(...refused);
      };

      const deadline = setTimeout(() => {
        if (!auth) close(4401, 'Authentication required: send {"type":"auth","token":"<access token>"} first');
      }, AUTH_WINDOW_MS);
      const periodic = setInterval(() => void recheck(), RECHECK_MS);
      periodic.unref();

      socket.on('message', (data: Buffer) => {
        const message = parseMessage(data);
        if (!message) return send({ type: 'error', error: 'Messages are JSON objects' });
        if (message.type === 'auth' && authenticating)
          return send({ type: 'error', error: 'Authentication already sent: a connection authenticates once' });
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
        closed = true;
        clearTimeout(deadline);
        clearInterval(periodic);
        release();
        releasePlace();
      });

      const waiting = waitingByAddress.take(request.ip, LIVE_LIMITS.waitingPerAddress);
      if (!waiting) {
        return close(TOO_MANY_CODE, `Too many live connections waiting to authenticate from this address (${LIVE_LIMITS.waitingPerAddress})`);
      }
      releasePlace = waiting;

      const header = bearer(request.headers.authorization);
      if (header) void authenticate(header);
    },
  );
}
