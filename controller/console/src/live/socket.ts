import { currentToken, onSessionChange } from '../auth/session';

/** One message of /api/live (see docs/console.md for the types). */
export interface LiveMessage {
  type: string;
  [field: string]: unknown;
}

type Handler = (message: LiveMessage) => void;

const handlers = new Set<Handler>();
let socket: WebSocket | null = null;
let retryMs = 1_000;
let retry: ReturnType<typeof setTimeout> | null = null;

function url(): string {
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  return `${scheme}://${location.host}/api/live`;
}

/** Opens the one shared socket; browsers cannot send headers, so the token goes in the first message. */
function open(): void {
  const token = currentToken();
  if (!token || socket) return;
  const ws = new WebSocket(url());
  socket = ws;
  ws.onopen = () => ws.send(JSON.stringify({ type: 'auth', token }));
  ws.onmessage = (event) => {
    let message: LiveMessage;
    try {
      message = JSON.parse(String(event.data)) as LiveMessage;
    } catch {
      return;
    }
    if (message.type === 'ready') retryMs = 1_000;
    for (const handler of handlers) handler(message);
  };
  ws.onclose = () => {
    if (socket !== ws) return;
    socket = null;
    if (!currentToken() || handlers.size === 0) return;
    retry = setTimeout(open, retryMs);
    retryMs = Math.min(retryMs * 2, 15_000);
  };
}

function shut(): void {
  if (retry) clearTimeout(retry);
  retry = null;
  const ws = socket;
  socket = null;
  ws?.close();
}

onSessionChange((signedIn) => {
  // A new token (refresh, switch-org) re-authenticates: the organization may have changed.
  shut();
  if (signedIn && handlers.size > 0) open();
});

/** Calls handler with every live message until the returned function is called. */
export function subscribeLive(handler: Handler): () => void {
  handlers.add(handler);
  open();
  return () => {
    handlers.delete(handler);
    if (handlers.size === 0) shut();
  };
}
