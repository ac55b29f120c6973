import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DestinationPolicy } from '../../controller/src/netbox/destination';
import { issueServerCertificate, loadOrCreateCa } from '../../controller/src/tls/ca';
import { startTestController, type TestController } from '../helpers/controller';
import { type NetboxSim, startNetboxSim } from '../sim/netbox/server';
import { inventoryUser, type InventoryUser } from './helpers';

/**
 * A NetBox source's URL is where the controller connects with a token: it must not become a way to
 * reach the controller's own network (loopback, link-local/metadata, its own port, unlisted hosts),
 * nor to read other services' answers back. Checked at create/update and at connect time.
 */

const TOKEN = 'destination-test-token-never-shown';
const INTERNAL = 'INTERNAL-SERVICE-ANSWER-7f3a';

let c: TestController;
let admin: InventoryUser;
let operator: As;
let sim: NetboxSim;
let internal: Server;
let internalUrl: string;
let port: number;

/** An internal service that is not NetBox: it answers with text that must stay inside the controller. */
function startInternalService(): Promise<Server> {
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    // Answers without end: 40 MB of empty objects, or 6 MB of them (under the byte limit, over the values one).
    if (path.startsWith('/huge') || path.startsWith('/many')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"count":1,"next":null,"results":[');
      const chunk = '{},'.repeat(100_000);
      for (let sent = 0; sent < (path.startsWith('/huge') ? 40e6 : 6e6); sent += chunk.length) res.write(chunk);
      res.end('{}]}');
      return;
    }
    if (path.startsWith('/redirect')) {
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
      return;
    }
    const status = Number(path.split('/')[1]) || 400;
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ detail: `${INTERNAL} ${status}`, results: INTERNAL }));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const setAllowList = async (entries: string[]) => {
  const res = await c.request('PUT', '/api/admin/settings', { token: c.adminToken, body: { settings: { 'netbox.allowed_hosts': entries } } });
  expect(res.status, res.text).toBe(200);
};

type As = InventoryUser['as'];

/** A user with devices.access only, in the organization of `org`. */
async function operatorOf(org: InventoryUser): Promise<As> {
  const username = `op-${randomBytes(4).toString('hex')}`;
  const password = `pw-${randomBytes(12).toString('hex')}`;
  const made = await org.as('POST', '/api/admin/users', { body: { username, password, roles: ['operator'] } });
  expect(made.status, made.text).toBe(201);
  const token = (await c.login(username, password)).body.access_token;
  return (method, path, options = {}) => c.request(method, path, { token, ...options });
}

const create = (as: As, url: string, extra: Record<string, unknown> = {}) =>
  as('POST', '/api/devices/sources/netbox', { body: { name: `nb-${Math.random().toString(36).slice(2, 8)}`, url, token: TOKEN, ...extra } });

async function created(url: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await create(admin.as, url, extra);
  expect(res.status, res.text).toBe(201);
  return res.body.id;
}

beforeAll(async () => {
  c = await startTestController();
  admin = await inventoryUser(c, ['org_admin']);
  operator = await operatorOf(admin);
  sim = await startNetboxSim({ token: TOKEN, devices: [] });
  port = Number(new URL(sim.url).port);
  internal = await startInternalService();
  internalUrl = `http://127.0.0.1:${(internal.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await sim?.close();
  await new Promise((resolve) => internal?.close(resolve));
  await c?.close();
});

describe('with the default (empty) allow-list', () => {
  it('refuses loopback, link-local and unspecified addresses, however written, naming the setting', async () => {
    for (const [url, what] of [
      [`http://127.0.0.1:${port}`, 'loopback'],
      [`http://127.0.0.2:${port}`, 'loopback'],
      [`http://[::1]:${port}`, 'loopback'],
      [`http://[::ffff:127.0.0.1]:${port}`, 'loopback'],
      [`http://2130706433:${port}`, 'loopback'],
      [`http://localhost:${port}`, 'localhost resolves to a loopback address'],
      ['http://169.254.169.254', 'link-local'],
      ['http://[fe80::1]', 'link-local'],
      [`http://0.0.0.0:${port}`, 'unspecified'],
    ] as const) {
      const res = await create(admin.as, url);
      expect(res.status, url).toBe(400);
      expect(res.body.code, url).toBe('NETBOX_URL_NOT_ALLOWED');
      expect(res.body.error, url).toContain(what);
      expect(res.body.error, url).toContain('netbox.allowed_hosts');
    }
    expect(sim.requests).toHaveLength(0);
  });

  it('refuses a host that does not resolve, and accepts an ordinary address', async () => {
    const unknown = await create(admin.as, 'http://no-such-host.invalid');
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toContain('does not resolve');
    expect((await create(admin.as, 'http://192.0.2.10')).status).toBe(201);
  });

  it('refuses an update that points an existing source at loopback', async () => {
    const id = await created('http://192.0.2.11');
    const res = await admin.as('PUT', `/api/devices/sources/netbox/${id}`, { body: { url: `http://127.0.0.1:${port}` } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('NETBOX_URL_NOT_ALLOWED');
    expect((await admin.as('GET', `/api/devices/sources/netbox/${id}`)).body.url).toBe('http://192.0.2.11');
  });
});

describe('with an allow-list', () => {
  it('only a platform administrator changes it', async () => {
    const res = await admin.as('PUT', '/api/admin/settings', { body: { settings: { 'netbox.allowed_hosts': ['127.0.0.1'] } } });
    expect(res.status).toBe(403);
    const bad = await c.request('PUT', '/api/admin/settings', {
      token: c.adminToken,
      body: { settings: { 'netbox.allowed_hosts': ['http://x y'] } },
    });
    expect(bad.status).toBe(400);
  });

  it('reaches a listed address, refuses unlisted hosts and the controller’s own port unless an entry names it', async () => {
    await setAllowList(['127.0.0.1']);
    const id = await created(sim.url);
    expect((await admin.as('POST', `/api/devices/sources/netbox/${id}/test`)).body).toMatchObject({ ok: true, count: 0 });
    // localhost resolves to 127.0.0.1, which is listed (an IPv6 ::1 answer would simply not be used).
    expect((await create(admin.as, `http://localhost:${port}`)).status).toBe(201);

    const unlisted = await create(admin.as, 'http://192.0.2.10');
    expect(unlisted.status).toBe(400);
    expect(unlisted.body.error).toContain('192.0.2.10:80 is not in the setting netbox.allowed_hosts');

    const own = await create(admin.as, c.url);
    expect(own.status).toBe(400);
    expect(own.body.error).toContain("the controller's own");
    await setAllowList(['127.0.0.1', `127.0.0.1:${new URL(c.url).port}`]);
    expect((await create(admin.as, c.url)).status).toBe(201);
  });

  it('checks again at test and sync time, on the address actually connected to', async () => {
    await setAllowList(['127.0.0.1']);
    const literal = await created(sim.url);
    const byName = await created(`http://localhost:${port}`);
    // A name entry alone does not open loopback: DNS may answer anything at sync time.
    await setAllowList(['localhost']);
    sim.requests.length = 0;
    const test = await admin.as('POST', `/api/devices/sources/netbox/${literal}/test`);
    expect(test.body).toMatchObject({ ok: false, error: expect.stringContaining('127.0.0.1 is a loopback address') });
    const sync = await admin.as('POST', `/api/devices/sources/netbox/${byName}/sync`);
    expect(sync.body).toMatchObject({ status: 'failed', added: 0 });
    expect(sync.body.errors[0].error).toContain('localhost resolves to a loopback address');
    expect(sync.body.errors[0].error).toContain('netbox.allowed_hosts');
    await setAllowList(['192.0.2.0/24']);
    expect((await admin.as('POST', `/api/devices/sources/netbox/${literal}/sync`)).body.errors[0].error).toContain('loopback');
    expect(sim.requests).toHaveLength(0);
  });
});

describe('answers of other services', () => {
  it('says what failed without echoing the remote body, which goes to the server log', async () => {
    await setAllowList(['127.0.0.1']);
    for (const [path, expected] of [
      ['/400', 'NetBox refused the device filters (HTTP 400)'],
      ['/401', 'NetBox refused the API token (HTTP 401)'],
      ['/418', 'NetBox answered HTTP 418'],
      ['/500', 'NetBox failed with HTTP 500 (server error)'],
    ] as const) {
      const id = await created(`${internalUrl}${path}`);
      const test = await admin.as('POST', `/api/devices/sources/netbox/${id}/test`);
      expect(test.body.ok, path).toBe(false);
      expect(test.body.error, path).toContain(expected);
      const sync = await admin.as('POST', `/api/devices/sources/netbox/${id}/sync`);
      expect(sync.body.errors[0].error, path).toContain(expected);
      expect(test.text + sync.text, path).not.toContain(INTERNAL);
    }
    const history = await admin.as('GET', '/api/devices/sync/history?limit=500');
    expect(history.text).not.toContain(INTERNAL);
    expect(c.logs()).toContain(INTERNAL);
    expect(c.logs()).not.toContain(TOKEN);
  });

  it('reads no more of an answer than a page of devices can take, and stays up', async () => {
    await setAllowList(['127.0.0.1']);
    for (const [path, expected] of [
      ['/huge', 'is larger than 8 MiB, the most the controller reads'],
      ['/many', 'holds more than 250000 JSON values, the most the controller parses'],
    ] as const) {
      const id = await created(`${internalUrl}${path}`);
      const test = await operator('POST', `/api/devices/sources/netbox/${id}/test`);
      expect(test.body, path).toMatchObject({ ok: false, error: expect.stringContaining(expected) });
      const sync = await operator('POST', `/api/devices/sources/netbox/${id}/sync`);
      expect(sync.body.errors[0].error, path).toContain(expected);
    }
    expect((await c.request('GET', '/healthz')).status).toBe(200);
  });

  it('does not follow a redirect', async () => {
    await setAllowList(['127.0.0.1']);
    const id = await created(`${internalUrl}/redirect`);
    const test = await admin.as('POST', `/api/devices/sources/netbox/${id}/test`);
    expect(test.body).toMatchObject({ ok: false, error: expect.stringContaining('redirect, which is not followed') });
  });
});

describe('connections that get no HTTP answer', () => {
  /** A TCP server on 127.0.0.1 that does `onSocket` with each connection; answers its URL and how to stop it. */
  async function tcpService(onSocket: (socket: Socket) => void): Promise<{ url: string; close(): Promise<void> }> {
    const sockets = new Set<Socket>();
    const server = createTcpServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => sockets.delete(socket));
      onSocket(socket);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const close = () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    };
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close };
  }

  it('get one message whatever failed (closed port, reset, not HTTP, TLS, silence), so no port scan; the cause is logged', async () => {
    await setAllowList(['127.0.0.1']);
    const dir = mkdtempSync(join(tmpdir(), 'nb-scan-'));
    const tls = await issueServerCertificate(await loadOrCreateCa({ dataDir: dir, tlsCa: null }), ['127.0.0.1']);
    const services = [
      await tcpService(() => undefined), // accepts, never answers
      await tcpService((socket) => socket.destroy()), // resets
      await tcpService((socket) => socket.write('SSH-2.0-OpenSSH_9.6\r\n')), // another protocol
      await tcpService(() => undefined),
    ];
    const closed = services.pop()!;
    await closed.close(); // nothing listens there any more
    const untrusted = await startNetboxSim({ token: TOKEN, devices: [], tls });
    try {
      const targets = [
        { url: closed.url, cause: /\[ECONNREFUSED\]/ },
        { url: services[0].url, cause: /^TimeoutError/ },
        { url: services[1].url, cause: /\[(?:UND_ERR_SOCKET|ECONNRESET|EPIPE)\]/ },
        { url: services[2].url, cause: /\[HPE_INVALID_CONSTANT\]/ },
        { url: internalUrl.replace('http:', 'https:'), cause: /\[ERR_SSL_WRONG_VERSION_NUMBER\]/ }, // TLS to a plain HTTP port
        { url: untrusted.url, cause: /\[SELF_SIGNED_CERT_IN_CHAIN\]/ },
      ];
      /** What the server log says of a source's failures: the cause of each. */
      const loggedCauses = (id: string) =>
        c
          .logs()
          .split('\n')
          .filter((line) => line.includes(id) && line.includes('"cause"'))
          .map((line) => (JSON.parse(line) as { cause: string }).cause);
      const answers = new Set<string>();
      for (const { url, cause } of targets) {
        const id = await created(url, { timeout_seconds: 1 });
        const test = await admin.as('POST', `/api/devices/sources/netbox/${id}/test`);
        expect(test.body.ok, url).toBe(false);
        const sync = await admin.as('POST', `/api/devices/sources/netbox/${id}/sync`);
        expect(sync.body, url).toMatchObject({ status: 'failed', added: 0 });
        for (const error of [test.body.error as string, sync.body.errors[0].error as string]) {
          expect(error, url).toContain(`Could not reach NetBox at ${url}: no HTTP answer came`);
          answers.add(error.replace(url, '<url>'));
        }
        expect(loggedCauses(id), url).toEqual([expect.stringMatching(cause), expect.stringMatching(cause)]);
      }
      expect([...answers]).toHaveLength(1);
      expect([...answers][0]).not.toMatch(/ECONN|refused|reset|SSL|HPE_|TLS certificate .* is not trusted|did not answer/);
      expect(c.logs()).not.toContain(TOKEN);
    } finally {
      await Promise.all(services.map((service) => service.close()));
      await untrusted.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('permissions', () => {
  it('an operator (devices.access only) cannot create a source or change its url, but uses it', async () => {
    await setAllowList(['127.0.0.1']);
    const refused = await create(operator, sim.url);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toContain('settings.manage');
    const id = await created(sim.url);
    const moved = await operator('PUT', `/api/devices/sources/netbox/${id}`, { body: { url: 'http://192.0.2.10' } });
    expect(moved.status).toBe(403);
    expect((await operator('PUT', `/api/devices/sources/netbox/${id}`, { body: { timeout_seconds: 5 } })).status).toBe(200);
    // Sending back the url the source already has (as an edit form does) changes nothing.
    expect((await operator('PUT', `/api/devices/sources/netbox/${id}`, { body: { url: `${sim.url}/api/`, verify_ssl: true } })).status).toBe(200);
    expect((await operator('POST', `/api/devices/sources/netbox/${id}/test`)).body.ok).toBe(true);
    expect((await admin.as('GET', `/api/devices/sources/netbox/${id}`)).body).toMatchObject({ url: sim.url, timeout_seconds: 5 });
  });

  it("an operator cannot turn a source's TLS check off (the token would go to whoever answers); an administrator can", async () => {
    // Sending the value the source already has, as an edit form does, is allowed.
    await setAllowList(['127.0.0.1']);
    const id = await created(sim.url);
    const relax = await operator('PUT', `/api/devices/sources/netbox/${id}`, { body: { verify_ssl: false } });
    expect(relax.status).toBe(403);
    expect(relax.body.error).toContain('settings.manage');
    expect((await admin.as('GET', `/api/devices/sources/netbox/${id}`)).body.verify_ssl).toBe(true);
    expect((await admin.as('PUT', `/api/devices/sources/netbox/${id}`, { body: { verify_ssl: false } })).status).toBe(200);
    expect((await operator('PUT', `/api/devices/sources/netbox/${id}`, { body: { verify_ssl: false, timeout_seconds: 7 } })).status).toBe(200);
    expect((await operator('PUT', `/api/devices/sources/netbox/${id}`, { body: { verify_ssl: true } })).status).toBe(200);
  });
});

describe('netbox.allowed_hosts entries', () => {
  const ownPort = 8080;
  const allows = (entries: string[], hostname: string, address: string, port: number) =>
    new DestinationPolicy(entries, () => [ownPort]).refusal(hostname, address, port) === null;

  it('names, wildcard names, addresses and CIDRs, each with an optional port', () => {
    expect(allows(['netbox.example.com'], 'netbox.example.com', '192.0.2.5', 443)).toBe(true);
    expect(allows(['netbox.example.com'], 'NetBox.Example.com.', '192.0.2.5', 443)).toBe(true);
    expect(allows(['netbox.example.com'], 'other.example.com', '192.0.2.5', 443)).toBe(false);
    expect(allows(['*.example.com'], 'nb.dc1.example.com', '192.0.2.5', 443)).toBe(true);
    expect(allows(['*.example.com'], 'example.com.evil.test', '192.0.2.5', 443)).toBe(false);
    expect(allows(['netbox.example.com:443'], 'netbox.example.com', '192.0.2.5', 8443)).toBe(false);
    expect(allows(['10.0.0.0/8'], 'nb', '10.20.30.40', 80)).toBe(true);
    expect(allows(['10.0.0.0/8:443'], 'nb', '10.20.30.40', 80)).toBe(false);
    expect(allows(['10.0.0.0/8:443'], 'nb', '10.20.30.40', 443)).toBe(true);
    expect(allows(['fd00::/8'], 'nb', 'fd12::1', 443)).toBe(true);
    expect(allows(['[fd00::/8]:443'], 'nb', 'fd12::1', 80)).toBe(false);
    // Unusable entries match nothing, and do not make the list read as empty.
    expect(allows(['not a host', '10.0.0.0/99'], 'nb', '10.0.0.1', 80)).toBe(false);
  });

  it('loopback, link-local and unspecified need an address entry; a name or a wider rule is not enough', () => {
    expect(allows([], 'nb', '192.0.2.5', 80)).toBe(true);
    for (const address of ['127.0.0.1', '::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '169.254.169.254', 'fe80::1', '0.0.0.0', '::']) {
      expect(allows([], 'nb', address, 80), address).toBe(false);
      expect(allows(['nb'], 'nb', address, 80), address).toBe(false);
    }
    expect(allows(['127.0.0.0/8'], 'localhost', '::ffff:127.0.0.1', 80)).toBe(true);
    expect(allows(['169.254.169.254'], 'metadata', '169.254.169.254', 80)).toBe(true);
  });

  it("the controller's own port needs an entry naming that port", () => {
    expect(allows(['127.0.0.1'], '127.0.0.1', '127.0.0.1', ownPort)).toBe(false);
    expect(allows(['127.0.0.1'], '127.0.0.1', '127.0.0.1', ownPort + 1)).toBe(true);
    expect(allows([`127.0.0.1:${ownPort}`], '127.0.0.1', '127.0.0.1', ownPort)).toBe(true);
    expect(allows([], 'nb', '192.0.2.5', ownPort)).toBe(true); // another host's 8080 is not ours
  });
});
