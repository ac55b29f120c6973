import { createRequire } from 'node:module';
import { until } from '../agents/helpers';
import type { TestController } from '../helpers/controller';

interface Ws {
  on(event: 'message', cb: (data: Buffer) => void): void;
  on(event: 'open' | 'error', cb: (arg?: unknown) => void): void;
  send(data: string): void;
  close(): void;
}
const WebSocket = createRequire(import.meta.url)('ws') as new (url: string) => Ws;

/** A signed-in /api/live connection collecting every message. */
export async function watch(c: TestController, token: string): Promise<{ events: any[]; close(): void }> {
  const ws = new WebSocket(`${c.url.replace('http', 'ws')}/api/live`);
  const events: any[] = [];
  ws.on('message', (data) => events.push(JSON.parse(String(data))));
  await new Promise((resolve, reject) => {
    ws.on('error', reject);
    ws.on('open', resolve);
  });
  ws.send(JSON.stringify({ type: 'auth', token }));
  await until('ready', () => events.find((e) => e.type === 'ready'));
  return { events, close: () => ws.close() };
}
