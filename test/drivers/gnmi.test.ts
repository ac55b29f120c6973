import { X509Certificate } from 'node:crypto';
import net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import type { ConfigChange, DeviceTarget } from '../../agent/src/drivers/types';
import { restoreScope } from '../../shared/src/jobs/deploy';
import { driverFailure, loopbackTarget } from './fixtures/netconf/testkit';
import {
  buildSetRequest,
  canonicalJson,
  channelAddress,
  formatPath,
  gnmiDriver,
  gnmiService,
  parsePath,
  PathSyntaxError,
  type Json,
} from '../../agent/src/drivers/gnmi';
import { newSelfSignedCert, startGnmiFleet, startGnmiTarget, type GnmiTarget, type GnmiTargetOptions } from '../sim/gnmi/target';

const INITIAL: Json = {
  'openconfig-interfaces:interfaces': {
    interface: [
      { name: 'Ethernet1', config: { name: 'Ethernet1', mtu: 1500, description: 'uplink' } },
      { name: 'Ethernet2', config: { name: 'Ethernet2', mtu: 1500 } },
    ],
  },
  'openconfig-system:system': { config: { hostname: 'r1' } },
};

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((o) => o.close()));
});

async function targetSim(opts: GnmiTargetOptions = {}): Promise<GnmiTarget> {
  const t = await startGnmiTarget({ initialTree: INITIAL, ...opts });
  open.push(t);
  return t;
}

function target(t: { port: number }, extra: Partial<DeviceTarget> = {}): DeviceTarget {
  return loopbackTarget({ gnmi: t.port }, extra);
}

async function session(t: GnmiTarget, extra: Partial<DeviceTarget> = {}, limits = {}) {
  const s = await gnmiDriver.open(target(t, extra), limits);
  open.push(s);
  return s;
}

const change = (operation: ConfigChange['operation'], target_path: string, config: Json | null): ConfigChange => ({
  operation,
  target_path,
  config_format: 'json',
  config: config === null ? '' : JSON.stringify(config),
});

describe('gNMI path parser', () => {
  it('parses elements and keys', () => {
    expect(parsePath('/interfaces/interface[name=Ethernet1]/config')).toEqual({
      elem: [
        { name: 'interfaces', key: {} },
        { name: 'interface', key: { name: 'Ethernet1' } },
        { name: 'config', key: {} },
      ],
    });
    expect(parsePath('/')).toEqual({ elem: [] });
    expect(parsePath('a/b/')).toEqual({
      elem: [
        { name: 'a', key: {} },
        { name: 'b', key: {} },
      ],
    });
  });

  it('takes "/" inside key values literally and unescapes "\\]" and "\\\\"', () => {
    const p = parsePath('/network-instances/network-instance[name=default]/protocols/protocol[identifier=BGP][name=bgp/1]/x');
    expect(p.elem[3]).toEqual({ name: 'protocol', key: { identifier: 'BGP', name: 'bgp/1' } });
    expect(p.elem[4].name).toBe('x');
    expect(parsePath('/a[k=x\\]y]/b').elem[0].key).toEqual({ k: 'x]y' });
    expect(parsePath('/a[k=back\\\\slash]').elem[0].key).toEqual({ k: 'back\\slash' });
    expect(parsePath('/a[k=a=b]').elem[0].key).toEqual({ k: 'a=b' });
    expect(parsePath('/a[k=[x]').elem[0].key).toEqual({ k: '[x' });
    expect(parsePath('/a[k=]').elem[0].key).toEqual({ k: '' });
    expect(parsePath('/a\\/b/c').elem.map((e) => e.name)).toEqual(['a/b', 'c']);
  });

  it('recognises an origin and keeps module prefixes on names', () => {
    expect(parsePath('openconfig:/interfaces')).toEqual({ origin: 'openconfig', elem: [{ name: 'interfaces', key: {} }] });
    expect(parsePath('/openconfig-interfaces:interfaces/interface[name=e:1/2]')).toEqual({
      elem: [
        { name: 'openconfig-interfaces:interfaces', key: {} },
        { name: 'interface', key: { name: 'e:1/2' } },
      ],
    });
  });

  it.each([
    ['/a[k=v', /unterminated key/],
    ['/a//b', /empty element name/],
    ['/a[=v]', /empty key name/],
    ['/a[k]', /unexpected ']' in key name/],
    ['/a[k', /missing '='/],
    ['/a[k=v]x', /expected '\/'/],
    ['/a[k=v\\', /dangling escape/],
    ['/a[k=1][k=2]', /duplicate key/],
  ])('rejects %s', (input, why) => {
    expect(() => parsePath(input)).toThrow(PathSyntaxError);
    expect(() => parsePath(input)).toThrow(why);
  });

  it('formats paths so that they parse back to the same path', () => {
    for (const s of ['/a/b[k=v]/c', '/a[k=x\\]y][z=1/2]', '/a\\/b[k=back\\\\slash]', 'oc:/x']) {
      const p = parsePath(s);
      expect(parsePath(formatPath(p))).toEqual(p);
    }
    expect(formatPath(parsePath('/a[z=1][b=2]'))).toBe('/a[b=2][z=1]');
  });
});

describe('SetRequest building', () => {
  it('puts every change into one request with the right operation lists', () => {
    const req = buildSetRequest([
      change('merge', '/system/config', { hostname: 'r2' }),
      change('replace', '/interfaces/interface[name=Ethernet2]/config', { name: 'Ethernet2', mtu: 9000 }),
      change('delete', '/interfaces/interface[name=Ethernet1]', null),
    ]);
    expect(req.delete).toEqual([
      {
        elem: [
          { name: 'interfaces', key: {} },
          { name: 'interface', key: { name: 'Ethernet1' } },
        ],
      },
    ]);
    expect(req.replace).toHaveLength(1);
    expect(JSON.parse(req.replace[0].val.json_ietf_val!.toString())).toEqual({ name: 'Ethernet2', mtu: 9000 });
    expect(req.update[0].path.elem.map((e) => e.name)).toEqual(['system', 'config']);
  });

  it('rejects invalid JSON, a bad path and a replace without a path', () => {
    expect(() => buildSetRequest([{ operation: 'merge', target_path: '/a', config_format: 'json', config: '{nope' }])).toThrow(/not valid JSON/);
    expect(() => buildSetRequest([change('merge', '/a[k=v', {})])).toThrow(/unterminated key/);
    expect(() => buildSetRequest([{ operation: 'replace', config_format: 'json', config: '{}' }])).toThrow(/needs a target_path/);
  });

  it('refuses a replace or delete of the root ("/" or an origin with no elements); a merge there is allowed', () => {
    for (const path of ['/', 'openconfig:/']) {
      expect(() => buildSetRequest([change('replace', path, { system: {} })]), path).toThrow(
        /change 1 \(.+\): gNMI replace of the root would replace the whole configuration; target_path must name a subtree/,
      );
      expect(() => buildSetRequest([change('delete', path, null)]), path).toThrow(/gNMI delete of the root would delete the whole configuration/);
    }
    expect(buildSetRequest([change('merge', '/', { system: { config: { hostname: 'r2' } } })]).update).toHaveLength(1);
    // A vendor's whole-configuration root is the root in all but name (SR OS /configure).
    expect(() => buildSetRequest([change('replace', '/configure', { system: {} })])).toThrow(
      /change 1 \(\/configure\): gNMI replace of \/configure would replace the whole Nokia SR OS configuration; target_path must name a subtree/,
    );
  });
});

describe('gNMI driver against the simulator', () => {
  it('reads capabilities and fetches the root as canonical JSON', async () => {
    const t = await targetSim();
    const s = await session(t);
    expect(s.capabilities.gNMI_version).toBe('0.10.0');
    expect(s.capabilities.supported_encodings).toContain('JSON_IETF');
    expect(s.capabilities.supported_models.map((m) => m.name)).toContain('openconfig-interfaces');
    const cfg = await s.fetchConfig();
    expect(cfg.format).toBe('json');
    expect(cfg.via).toBe('gnmi');
    expect(cfg.text).toBe(canonicalJson(INITIAL));
    expect(cfg.text.indexOf('"openconfig-interfaces:interfaces"')).toBeLessThan(cfg.text.indexOf('"openconfig-system:system"'));
    // Keys are sorted at every level, so an unchanged device gives unchanged text.
    expect(cfg.text.indexOf('"description"')).toBeLessThan(cfg.text.indexOf('"mtu"'));
    expect((await s.fetchConfig()).text).toBe(cfg.text);
    expect(await s.get('/interfaces/interface[name=Ethernet2]/config')).toEqual({ name: 'Ethernet2', mtu: 1500 });
  });

  it('dials an IPv4 and an IPv6 address through their own schemes and a name through DNS', async () => {
    expect(channelAddress('10.0.0.1', 57400)).toBe('ipv4:10.0.0.1:57400');
    expect(channelAddress('2001:db8::1', 57400)).toBe('ipv6:[2001:db8::1]:57400');
    expect(channelAddress('[2001:db8::1]', 57400)).toBe('ipv6:[2001:db8::1]:57400');
    expect(channelAddress('router1.example.net', 57400)).toBe('router1.example.net:57400');
    const v4 = await targetSim();
    const v6 = await targetSim({ host: '[::1]' });
    for (const [sim, host] of [
      [v4, '127.0.0.1'],
      [v6, '::1'],
      [v4, 'localhost'],
    ] as const) {
      const s = await session(sim, { host });
      expect((await s.fetchConfig()).text).toBe(canonicalJson(INITIAL));
    }
  });

  it('applies several changes in ONE SetRequest', async () => {
    const t = await targetSim();
    const s = await session(t);
    await s.apply([
      change('merge', '/interfaces/interface[name=Ethernet1]/config', { mtu: 9000 }),
      change('replace', '/interfaces/interface[name=Ethernet3]/config', { name: 'Ethernet3', mtu: 1400 }),
      change('delete', '/interfaces/interface[name=Ethernet2]', null),
      change('merge', '/system/config', { hostname: 'r2' }),
    ]);
    expect(t.setRequests).toEqual([
      {
        delete: ['/interfaces/interface[name=Ethernet2]'],
        replace: ['/interfaces/interface[name=Ethernet3]/config'],
        update: ['/interfaces/interface[name=Ethernet1]/config', '/system/config'],
      },
    ]);
    expect(t.tree()).toEqual({
      'openconfig-interfaces:interfaces': {
        interface: [
          { name: 'Ethernet1', config: { name: 'Ethernet1', mtu: 9000, description: 'uplink' } },
          { name: 'Ethernet3', config: { name: 'Ethernet3', mtu: 1400 } },
        ],
      },
      'openconfig-system:system': { config: { hostname: 'r2' } },
    });
  });

  it('leaves the tree unchanged when the target fails the Set', async () => {
    const t = await targetSim({ faults: { failSetPaths: ['/system'] } });
    const s = await session(t);
    const err = await driverFailure(
      s.apply([
        change('merge', '/interfaces/interface[name=Ethernet1]/config', { mtu: 9000 }),
        change('merge', '/system/config', { hostname: 'r2' }),
      ]),
    );
    expect(err.kind).toBe('device');
    expect(err.message).toContain('ABORTED');
    expect(err.message).toContain('injected failure: Set touches /system');
    expect(t.tree()).toEqual(INITIAL);
    expect(t.setRequests).toHaveLength(1);
  });

  it('leaves the tree unchanged when a later operation of the Set is invalid', async () => {
    const t = await targetSim();
    const s = await session(t);
    // The second update treats a container as a list: the whole request must be refused.
    const err = await driverFailure(
      s.apply([change('merge', '/system/config', { hostname: 'r2' }), change('merge', '/system/config[name=x]/y', { z: 1 })]),
    );
    expect(err.kind).toBe('device');
    expect(err.message).toMatch(/INVALID_ARGUMENT: .*not a list/);
    expect(t.tree()).toEqual(INITIAL);
  });

  it('fails the Nth Set and maps the status code', async () => {
    const t = await targetSim({ faults: { failNthSet: 2, failCode: grpc.status.FAILED_PRECONDITION } });
    const s = await session(t);
    await s.apply([change('merge', '/system/config', { hostname: 'one' })]);
    const err = await driverFailure(s.apply([change('merge', '/system/config', { hostname: 'two' })]));
    expect(err.kind).toBe('device');
    expect(err.message).toMatch(/FAILED_PRECONDITION: injected failure of Set #2/);
    expect((t.tree() as { 'openconfig-system:system': { config: { hostname: string } } })['openconfig-system:system'].config.hostname).toBe('one');
  });

  it('restores a backup with a replace at the root', async () => {
    const t = await targetSim();
    const s = await session(t);
    const backup = await s.fetchConfig();
    await s.apply([change('delete', '/interfaces', null), change('merge', '/extra/config', { on: true })]);
    expect(t.tree()).toEqual({ extra: { config: { on: true } }, 'openconfig-system:system': { config: { hostname: 'r1' } } });
    await s.restore(backup);
    expect(t.tree()).toEqual(INITIAL);
    expect((await s.fetchConfig()).text).toBe(backup.text);
    expect(t.setRequests.at(-1)).toEqual({ delete: [], replace: ['/'], update: [] });
    await expect(s.restore({ text: '<x/>', format: 'xml', via: 'netconf' })).rejects.toThrow(/cannot restore a xml configuration/);
  });

  it('restores only the subtrees a deployment changed when given them, and leaves the rest of the device as it is', async () => {
    const t = await targetSim();
    const s = await session(t);
    const backup = await s.fetchConfig();
    const changes = [
      change('replace', '/interfaces/interface[name=Ethernet1]', { name: 'Ethernet1', config: { name: 'Ethernet1', mtu: 9000 } }),
      change('merge', '/extra/config', { on: true }),
    ];
    await s.apply(changes);
    // Changed by hand meanwhile, outside the deployment's subtrees (or, on a real target, what its Get of / never returned).
    await s.apply([change('merge', '/system/config', { hostname: 'by-hand' })]);
    const scope = restoreScope(changes)!;
    await s.restore(backup, scope);
    // The interface has the backup's value again, the path the backup lacked is deleted (that path
    // only: an ancestor may hold what a Get of / does not return), the hostname is left alone.
    expect(t.setRequests.at(-1)).toEqual({ delete: ['/extra/config'], replace: ['/interfaces/interface[name=Ethernet1]'], update: [] });
    expect(t.tree()).toEqual({ ...INITIAL, extra: {}, 'openconfig-system:system': { config: { hostname: 'by-hand' } } });
    // Restored where it was put back, though the device differs elsewhere.
    expect(s.restored(await s.fetchConfig(), backup, scope)).toBe(true);
    expect(s.restored(await s.fetchConfig(), backup, ['/system/config'])).toBe(false);
    // A change set with a merge at the root may touch anything: the whole backup goes back.
    expect(restoreScope([...changes, { target_path: null }])).toBeUndefined();
    expect(restoreScope([{ target_path: 'openconfig:/' }])).toBeUndefined();
  });

  it('a scoped restore matches identity keys with or without their module, and refuses what the backup cannot say', async () => {
    const t = await targetSim({
      initialTree: {
        'openconfig-network-instance:network-instances': {
          'network-instance': [
            {
              name: 'default',
              protocols: {
                protocol: [
                  { identifier: 'openconfig-policy-types:BGP', name: 'BGP', config: { identifier: 'openconfig-policy-types:BGP', name: 'BGP' } },
                ],
              },
            },
          ],
        },
        'ietf-interfaces:interfaces': { interface: [{ name: 'eth0' }] },
        'openconfig-interfaces:interfaces': { interface: [{ name: 'eth0', config: { name: 'eth0' } }] },
      },
    });
    const s = await session(t);
    const backup = await s.fetchConfig();
    const bgp = '/network-instances/network-instance[name=default]/protocols/protocol[identifier=BGP][name=BGP]';
    await s.restore(backup, [bgp]);
    // The entry is found though the path names the identity without its module: put back, not deleted.
    expect(t.setRequests.at(-1)).toEqual({ delete: [], replace: [bgp], update: [] });
    await expect(s.restore(backup, ['/interfaces/interface[name=eth0]'])).rejects.toThrow(
      /^restore of \/interfaces\/interface\[name=eth0\]: \/interfaces names ietf-interfaces:interfaces and openconfig-interfaces:interfaces; write/,
    );
    await expect(s.restore(backup, ['cli:/running'])).rejects.toThrow(/holds nothing of origin cli/);
    expect(t.setRequests).toHaveLength(1);
  });

  it('talks TLS to a self-signed target when gnmi_skip_verify is set, and refuses it otherwise', async () => {
    const t = await targetSim({ tls: true });
    const s = await session(t, { gnmi_tls: true, gnmi_skip_verify: true });
    expect((await s.fetchConfig()).text).toBe(canonicalJson(INITIAL));
    const err = await driverFailure(gnmiDriver.open(target(t, { gnmi_tls: true, gnmi_skip_verify: false }), { connectTimeoutMs: 3000 }));
    expect(err.kind).toBe('auth');
    expect(err.message).toMatch(/certificate/);
  });

  it('grpc-js calls checkServerIdentity only once the chain verified: never with rejectUnauthorized false and a self-signed certificate', async () => {
    // Why the certificate pin wraps the secure connector (agent/src/drivers/gnmi/tls-pin.ts)
    // instead of using VerifyOptions.checkServerIdentity: Node's tls.connect skips the callback
    // when chain verification failed, which is every session with gnmi_skip_verify.
    const t = await targetSim({ tls: true });
    const capabilities = async (verify: grpc.VerifyOptions, roots: Buffer | null) => {
      const seen: string[] = [];
      const creds = grpc.credentials.createSsl(roots, null, null, {
        ...verify,
        checkServerIdentity: (_host, cert) => void seen.push(cert.fingerprint256),
      });
      const Ctor = gnmiService();
      const client = new Ctor(`localhost:${t.port}`, creds);
      const md = new grpc.Metadata();
      md.set('username', 'admin');
      md.set('password', 'admin');
      const err = await new Promise((resolve) => (client as any).Capabilities({}, md, { deadline: Date.now() + 5000 }, (e: unknown) => resolve(e)));
      client.close();
      return { err, seen };
    };
    const skipVerify = await capabilities({ rejectUnauthorized: false }, null);
    expect(skipVerify.err).toBeNull();
    expect(skipVerify.seen).toEqual([]);
    const trusted = await capabilities({}, Buffer.from(t.certPem!));
    expect(trusted.err).toBeNull();
    expect(trusted.seen).toEqual([new X509Certificate(t.certPem!).fingerprint256]);
  });

  it('reports the TLS certificate it saw (SHA-256 as openssl prints it); plaintext has none', async () => {
    const t = await targetSim({ tls: true });
    const s = await session(t, { gnmi_tls: true, gnmi_skip_verify: true });
    const x = new X509Certificate(t.certPem!);
    expect(s.gnmiCert).toEqual({ sha256: x.fingerprint256, subject: 'CN=localhost', not_after: new Date(x.validTo).toISOString() });
    expect(s.gnmiCert!.sha256).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    const plain = await session(await targetSim());
    expect(plain.gnmiCert).toBeUndefined();
  });

  it("refuses a certificate other than the pinned one before any RPC → 'hostkey'; the pinned one passes", async () => {
    const t = await targetSim({ tls: true, cert: newSelfSignedCert() });
    const good = new X509Certificate(t.certPem!).fingerprint256;
    const s = await session(t, { gnmi_tls: true, gnmi_skip_verify: true, gnmi_cert_sha256: good });
    expect(s.gnmiCert?.sha256).toBe(good);
    expect(t.rpcs).toEqual(['/gnmi.gNMI/Capabilities']);

    const wrong = good.replace(/^../, good.startsWith('00') ? '11' : '00');
    const transcript: string[] = [];
    const err = await driverFailure(
      gnmiDriver.open(
        target(t, { gnmi_tls: true, gnmi_skip_verify: true, gnmi_cert_sha256: wrong }),
        { connectTimeoutMs: 3000 },
        { write: (_d, text) => transcript.push(text) },
      ),
    );
    expect(err.kind).toBe('hostkey');
    expect(err.message).toBe(
      `gNMI certificate: mismatch for sim (127.0.0.1:${t.port}): expected SHA-256 ${wrong}, device presented ${good} (CN=localhost). ` +
        "If the device's certificate was replaced, clear the pinned certificate: DELETE /api/devices/:id/gnmi-certificate",
    );
    expect(transcript.join('\n')).toContain('gNMI certificate: mismatch');
    // The refused session never reached the server's handlers: no credentials were sent.
    expect(t.rpcs).toEqual(['/gnmi.gNMI/Capabilities']);
  });

  it('checks every TLS session: a reconnect of an open session to another certificate is refused', async () => {
    const first = await targetSim({ tls: true, cert: newSelfSignedCert() });
    const port = first.port;
    const s = await session(first, { gnmi_tls: true, gnmi_skip_verify: true });
    const learned = s.gnmiCert!.sha256;
    await first.close();
    // Until the client has seen the old connection end, a call would go out on it and be cancelled.
    const channel = (s as unknown as { client: grpc.Client }).client.getChannel();
    while (channel.getConnectivityState(false) === grpc.connectivityState.READY) await new Promise((r) => setTimeout(r, 20));
    const impostor = await targetSim({ tls: true, cert: newSelfSignedCert(), port });
    const err = await driverFailure(s.fetchConfig());
    expect(err.kind, err.message).toBe('hostkey');
    expect(err.message).toContain(`expected SHA-256 ${learned}, device presented ${new X509Certificate(impostor.certPem!).fingerprint256}`);
    expect(impostor.rpcs).toEqual([]);
  });

  it('fails cleanly when TLS and plaintext are mixed up', async () => {
    const tls = await targetSim({ tls: true });
    const plain = await targetSim();
    const e1 = await driverFailure(gnmiDriver.open(target(tls, { gnmi_tls: false }), { connectTimeoutMs: 2000 }));
    // A plaintext HTTP/2 preface to a TLS listener: the connection just fails.
    expect(['refused', 'protocol']).toContain(e1.kind);
    const e2 = await driverFailure(gnmiDriver.open(target(plain, { gnmi_tls: true, gnmi_skip_verify: true }), { connectTimeoutMs: 2000 }));
    expect(e2.kind).toBe('protocol');
    expect(e2.message).toMatch(/TLS\/HTTP2 negotiation failed .*check gnmi_tls/);
  });

  it('auth: wrong password gives kind auth', async () => {
    const t = await targetSim();
    const err = await driverFailure(gnmiDriver.open(target(t, { credentials: { username: 'admin', password: 'nope' } })));
    expect(err.kind).toBe('auth');
    expect(err.message).toMatch(/authentication failed .*invalid username or password/);
  });

  it('timeout: a slow target exceeds the command deadline', async () => {
    const t = await targetSim();
    const s = await session(t, {}, { commandTimeoutMs: 200 });
    t.faults.delayMs = 1000;
    const err = await driverFailure(s.fetchConfig());
    expect(err.kind).toBe('timeout');
    expect(err.message).toMatch(/gNMI Get \/ on 127\.0\.0\.1:\d+ timed out after 200ms/);
  });

  it('refused: nothing listening', async () => {
    const srv = net.createServer();
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
    const port = (srv.address() as net.AddressInfo).port;
    await new Promise<void>((r) => srv.close(() => r()));
    const err = await driverFailure(gnmiDriver.open(target({ port }), { connectTimeoutMs: 3000 }));
    expect(err.kind).toBe('refused');
  });

  it('writes a transcript with the password masked', async () => {
    const t = await targetSim({ password: 'gn-secret', initialTree: { system: { config: { note: 'gn-secret' } } } });
    const lines: string[] = [];
    const s = await gnmiDriver.open(
      target(t, { credentials: { username: 'admin', password: 'gn-secret' } }),
      {},
      { write: (dir, text) => lines.push(`${dir} ${text}`) },
    );
    open.push(s);
    await s.fetchConfig();
    const all = lines.join('\n');
    expect(all).toContain('sent Get');
    expect(all).toContain('note');
    expect(all).toContain('******');
    expect(all).not.toContain('gn-secret');
  });

  it('serves a Subscribe ONCE through the same proto (updates, then sync_response)', async () => {
    const t = await targetSim();
    const client = new (gnmiService())(`127.0.0.1:${t.port}`, grpc.credentials.createInsecure());
    try {
      const md = new grpc.Metadata();
      md.set('username', 'admin');
      md.set('password', 'admin');
      const call = (client as unknown as { Subscribe(md: grpc.Metadata): grpc.ClientDuplexStream<unknown, Record<string, unknown>> }).Subscribe(md);
      const got: Record<string, unknown>[] = [];
      const done = new Promise<void>((resolve, reject) => {
        call.on('data', (m) => got.push(m));
        call.on('end', () => resolve());
        call.on('error', reject);
      });
      call.write({
        subscribe: { mode: 'ONCE', encoding: 'JSON_IETF', subscription: [{ path: { elem: [{ name: 'system' }, { name: 'config' }] } }] },
      });
      await done;
      expect(got.map((m) => m.response)).toEqual(['update', 'sync_response']);
      const upd = got[0].update as { update: { val: { json_ietf_val: Buffer } }[] };
      expect(JSON.parse(upd.update[0].val.json_ietf_val.toString())).toEqual({ hostname: 'r1' });
    } finally {
      client.close();
    }
  });

  it('starts a fleet of independent targets', async () => {
    const fleet = await startGnmiFleet(10, (i) => ({ initialTree: { system: { config: { hostname: `r${i}` } } } }));
    open.push(fleet);
    const s = await session(fleet.targets[6]);
    expect(await s.get('/system/config/hostname')).toBe('r6');
    expect(new Set(fleet.targets.map((t) => t.port)).size).toBe(10);
  });
});
