import { createRequire } from 'node:module';
import { until } from '../agents/helpers';
import type { TestController } from '../helpers/controller';

// ws ships no type definitions here: the few members used are typed below.
interface Ws {
  on(event: 'message', cb: (data: Buffer) => void): void;
  on(event: 'close', cb: (code: number, reason: Buffer) => void): void;
  on(event: 'open' | 'error', cb: (arg?: unknown) => void): void;
  send(data: string): void;
  close(): void;
}
const WebSocket = createRequire(import.meta.url)('ws') as new (url: string, options?: { headers?: Record<string, string> }) => Ws;

export interface Client {
  events: any[];
  closed: Promise<{ code: number; reason: string }>;
  send(message: unknown): void;
  /** Sends text as it is, not as JSON. */
  raw(text: string): void;
  next(match: (event: any) => boolean, what: string): Promise<any>;
  close(): void;
}

export function connect(c: TestController, headers?: Record<string, string>): Promise<Client> {
  const ws = new WebSocket(`${c.url.replace('http', 'ws')}/api/live`, headers ? { headers } : undefined);
  const events: any[] = [];
  ws.on('message', (data) => events.push(JSON.parse(String(data))));
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })),
  );
  return new Promise((resolve, reject) => {
    ws.on('error', reject);
    ws.on('open', () =>
      resolve({
        events,
        closed,
        send: (message) => ws.send(JSON.stringify(message)),
        raw: (text) => ws.send(text),
        next: (match, what) => until(what, () => events.find(match), 30_000, 20),
        close: () => ws.close(),
      }),
    );
  });
}

export interface LiveWatch {
  events: any[];
  /** Resolves when the connection closes, with the server's code and reason. */
  closed: Promise<{ code: number; reason: string }>;
  /** Whether the connection still answers: a ping, then its pong (false once it closed instead). */
  answers(): Promise<boolean>;
  close(): void;
}

/** A signed-in /api/live connection collecting every message (to `base`: another replica than `c`). */
export async function watch(c: TestController, token: string, base = c.url): Promise<LiveWatch> {
  const ws = new WebSocket(`${base.replace('http', 'ws')}/api/live`);
  const events: any[] = [];
  let open = true;
  ws.on('message', (data) => events.push(JSON.parse(String(data))));
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => {
      open = false;
      resolve({ code, reason: String(reason) });
    }),
  );
  await new Promise((resolve, reject) => {
    ws.on('error', reject);
    ws.on('open', resolve);
  });
  ws.send(JSON.stringify({ type: 'auth', token }));
  await until('ready', () => events.find((e) => e.type === 'ready'));
  return {
    events,
    closed,
    answers: async () => {
      const pongs = () => events.filter((e) => e.type === 'pong').length;
      const before = pongs();
      if (open) ws.send(JSON.stringify({ type: 'ping' }));
      await until('pong or close', () => !open || pongs() > before);
      return open;
    },
    close: () => ws.close(),
  };
}
