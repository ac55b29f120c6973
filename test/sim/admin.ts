/**
 * The simulator's admin port: read and change a simulated device's configuration from outside,
 * as another operator at the console would, so the next backup shows a real diff.
 *
 *   GET /devices                     the device table as JSON
 *   GET /devices/NAME/config         the running configuration (CLI text, NETCONF XML, gNMI JSON)
 *   PUT /devices/NAME/config         replace it with the request body (same format)
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SimDevice } from './main';

const MAX_BODY = 4 * 1024 * 1024;

function send(res: ServerResponse, status: number, body: string, type = 'text/plain; charset=utf-8'): void {
  res.writeHead(status, { 'content-type': type });
  res.end(body.endsWith('\n') ? body : body + '\n');
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw new RangeError(`a configuration is at most ${MAX_BODY} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

const row = (d: SimDevice) => ({ name: d.name, host: d.host, port: d.port, transport: d.transport, device_type: d.device_type });

async function handle(devices: Map<string, SimDevice>, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://sim').pathname;
  if (path === '/devices' && req.method === 'GET') return send(res, 200, JSON.stringify([...devices.values()].map(row)), 'application/json');
  const m = /^\/devices\/([^/]+)\/config$/.exec(path);
  if (!m) return send(res, 404, 'not found: use GET /devices, GET or PUT /devices/NAME/config');
  const device = devices.get(decodeURIComponent(m[1]));
  if (!device) return send(res, 404, `no simulated device named "${decodeURIComponent(m[1])}" (GET /devices lists them)`);
  if (req.method === 'GET') return send(res, 200, device.config());
  if (req.method !== 'PUT') return send(res, 405, 'use GET or PUT');
  const body = await readBody(req);
  if (!body.trim()) return send(res, 400, 'the body is the new configuration; it is empty');
  try {
    device.setConfig(body);
  } catch (e) {
    return send(res, 400, `${device.name}: configuration refused: ${(e as Error).message}`);
  }
  send(res, 200, `${device.name}: configuration replaced (${body.split('\n').length} lines)`);
}

/** Serves the admin API on host:port (port 0: any free one). */
export async function startSimAdmin(devices: SimDevice[], host: string, port: number): Promise<{ port: number; server: Server }> {
  const byName = new Map(devices.map((d) => [d.name, d]));
  const server = createServer((req, res) => {
    handle(byName, req, res).catch((e: Error) => send(res, e instanceof RangeError ? 413 : 500, e.message));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return { port: (server.address() as AddressInfo).port, server };
}
