/**
 * The NETCONF driver against a real peer: Debian's netconfd (yuma123) behind a real OpenSSH
 * sshd, root login with a key. The harness throws (the suite fails, it does not skip) with a
 * clear message when the packages are missing or the daemons do not come up.
 */
import ssh2, { type ClientChannel } from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { driverFailure, loopbackTarget } from './fixtures/netconf/testkit';
import {
  CAP,
  FrameDecoder,
  NS_BASE,
  NetconfClient,
  YUMA_MYSESSION,
  encodeMessage,
  netconfDriver,
  type NetconfDeviceSession,
} from '../../agent/src/drivers/netconf';
import { unifiedDiff } from '../../shared/src/diff/unified';
import { startNetconfd, type NetconfdPeer } from '../sim/netconf/netconfd';
import { startTestController, type TestController } from '../helpers/controller';
import { agentFor, api, waitFor } from '../deployments/helpers';

const NS = 'urn:switchboard:test';
let peer: NetconfdPeer;
let s: NetconfDeviceSession;

beforeAll(async () => {
  peer = await startNetconfd(['sb-test']);
  const target = loopbackTarget(
    { ssh: peer.port, netconf: peer.port },
    { id: 'netconfd', name: 'netconfd', host: peer.host, credentials: { username: peer.username, private_key: peer.privateKey } },
  );
  try {
    s = await netconfDriver.open(target, { connectTimeoutMs: 10_000, commandTimeoutMs: 10_000 });
  } catch (err) {
    throw new Error(`could not open a NETCONF session to netconfd: ${String(err)}\n${peer.logs()}`);
  }
});

afterAll(async () => {
  await s?.close();
  await peer?.close();
});

describe('NETCONF driver against netconfd (yuma123) over OpenSSH', () => {
  it('exchanges hellos: base:1.1 chunked framing and the candidate capabilities', () => {
    expect(s.framing).toBe('chunked');
    expect(s.capabilities).toContain(CAP.base11);
    expect(s.capabilities).toContain(CAP.candidate);
    expect(s.capabilities).toContain(CAP.confirmedCommit11);
    expect(s.capabilities.some((c) => c.startsWith(`${NS}?module=sb-test`))).toBe(true);
  });

  it('gets the running config, applies a change through candidate + confirmed commit, and reads it back', async () => {
    const before = await s.fetchConfig();
    expect(before.format).toBe('xml');
    expect(before.text).not.toContain('sb-test-host');
    await s.apply([
      {
        operation: 'merge',
        config_format: 'xml',
        config:
          `<settings xmlns="${NS}"><hostname>sb-test-host</hostname>` +
          '<server><name>ntp</name><port>123</port></server><server><name>dns</name><port>53</port></server></settings>',
      },
    ]);
    const after = await s.fetchConfig();
    expect(after.text).toContain('<hostname>sb-test-host</hostname>');
    expect(after.text).toContain('<name>ntp</name>');
    expect(after.text).toContain('<port>53</port>');
    expect((await s.fetchConfig()).text).toBe(after.text);
    expect(await s.getConfig('candidate')).toBe(after.text);

    // delete one list entry by target_path, then restore the state before this test.
    await s.apply([
      {
        operation: 'delete',
        target_path: '/settings/server[name=dns]',
        config_format: 'xml',
        config: `<settings xmlns="${NS}"><server><name>dns</name></server></settings>`,
      },
    ]);
    const deleted = (await s.fetchConfig()).text;
    expect(deleted).toContain('<name>ntp</name>');
    expect(deleted).not.toContain('<name>dns</name>');

    await s.restore(before);
    expect((await s.fetchConfig()).text).toBe(before.text);
  });

  it('restores a backup exactly: changed leaves, added and removed list entries', async () => {
    await s.apply([
      {
        operation: 'merge',
        config_format: 'xml',
        config: `<settings xmlns="${NS}"><hostname>a</hostname><server><name>ntp</name><port>123</port></server></settings>`,
      },
    ]);
    const backup = await s.fetchConfig();
    await s.apply([
      {
        operation: 'merge',
        config_format: 'xml',
        config: `<settings xmlns="${NS}"><hostname>b</hostname><server><name>dns</name><port>53</port></server></settings>`,
      },
      {
        operation: 'delete',
        config_format: 'xml',
        target_path: '/settings/server[name=ntp]',
        config: `<settings xmlns="${NS}"><server><name>ntp</name></server></settings>`,
      },
    ]);
    expect((await s.fetchConfig()).text).not.toBe(backup.text);
    await s.restore(backup);
    expect((await s.fetchConfig()).text).toBe(backup.text);
  });

  it('netconfd reverts a confirmed commit when the session that made it is lost', async () => {
    const before = (await s.fetchConfig()).text;
    const raw = await NetconfClient.connect({
      host: peer.host,
      port: peer.port,
      username: peer.username,
      privateKey: peer.privateKey,
      // Generous for a loaded CI machine (the lock is this session's first rpc: see the last describe).
      limits: { connectTimeoutMs: 30_000, commandTimeoutMs: 30_000, idleTimeoutMs: 30_000, commitTimeoutMs: 30_000, keepaliveIntervalMs: 10_000 },
    });
    await raw.rpc('<lock><target><candidate/></target></lock>', 'lock').catch((err) => {
      throw new Error(`${String(err)}\nnetconfd and sshd said:\n${peer.logs()}`);
    });
    await raw.rpc(
      `<edit-config><target><candidate/></target><config><settings xmlns="${NS}"><hostname>unconfirmed</hostname></settings></config></edit-config>`,
      'edit-config',
    );
    await raw.rpc('<commit><confirmed/><confirm-timeout>600</confirm-timeout></commit>', 'confirmed commit');
    expect((await s.fetchConfig()).text).toContain('<hostname>unconfirmed</hostname>');
    raw.abort(); // the session dies without a confirming commit
    // netconfd notices the dropped session and rolls back; wait for it (bounded by the test timeout).
    let now = (await s.fetchConfig()).text;
    while (now !== before) {
      await new Promise((r) => setTimeout(r, 50));
      now = (await s.fetchConfig()).text;
    }
    expect(now).toBe(before);
  }, 90_000);

  it("surfaces netconfd's rpc-error with its details and leaves the running config alone", async () => {
    const before = (await s.fetchConfig()).text;
    const e = await driverFailure(
      s.apply([
        { operation: 'merge', config_format: 'xml', config: `<settings xmlns="${NS}"><server><name>web</name><port>8080</port></server></settings>` },
      ]),
    );
    expect(e.kind).toBe('device');
    expect(e.message).toContain('edit-config candidate');
    expect(e.message).toContain('invalid-value');
    expect(e.message).toContain("sbt:server[sbt:name='web']/sbt:port");
    expect(e.message).toContain('value not in range');
    expect(e.message).toContain('<bad-value xmlns="http://netconfcentral.org/ns/yuma-ncx">8080</bad-value>');
    expect((await s.fetchConfig()).text).toBe(before);
    // The candidate was discarded and unlocked: a following change goes through.
    await s.apply([{ operation: 'merge', config_format: 'xml', config: `<settings xmlns="${NS}"><hostname>after-error</hostname></settings>` }]);
    expect((await s.fetchConfig()).text).toContain('<hostname>after-error</hostname>');
  });
});

// Lists keyed by something other than <name> (sb-test's acls: entries by seq; vlans by vlan-id):
// a change set must never fuse two entries, whatever their key.
describe('NETCONF lists not keyed by name against netconfd', () => {
  const acl = (entry: string): string => `<acls xmlns="${NS}"><acl><name>edge-in</name>${entry}</acl></acls>`;
  const DENY = '<entry><seq>10</seq><action>deny</action><src>192.0.2.0/24</src></entry>';
  const PERMIT = '<entry><seq>20</seq><action>permit</action></entry>';
  const merge = (config: string, target_path?: string) => ({ operation: 'merge' as const, config_format: 'xml' as const, config, target_path });

  /** The running config without the indentation, for whole-element assertions. */
  const compact = async (): Promise<string> => (await s.fetchConfig()).text.replace(/\n\s*/g, '');

  it('keeps the entries two changes add to one list apart, each with only its own leaves', async () => {
    const before = await s.fetchConfig();
    await s.apply([merge(acl(DENY)), merge(acl(PERMIT))]);
    const running = await compact();
    expect(running).toContain(`<acl><name>edge-in</name>${DENY}${PERMIT}</acl>`);

    // Two changes to the same entry, and to vlans side by side, are combined by the device.
    await s.apply([
      merge(acl('<entry><seq>20</seq><src>198.51.100.0/24</src></entry>')),
      merge(`<vlans xmlns="${NS}"><vlan><vlan-id>10</vlan-id><description>users</description></vlan></vlans>`),
      merge(`<vlans xmlns="${NS}"><vlan><vlan-id>20</vlan-id><description>voice</description></vlan></vlans>`),
      { ...merge(acl('<entry><seq>10</seq></entry>'), '/acls/acl[name=edge-in]/entry[seq=10]'), operation: 'delete' },
    ]);
    const after = await compact();
    expect(after).toContain('<acl><name>edge-in</name><entry><seq>20</seq><action>permit</action><src>198.51.100.0/24</src></entry></acl>');
    expect(after).toContain(
      '<vlans xmlns="urn:switchboard:test"><vlan><vlan-id>10</vlan-id><description>users</description></vlan>' +
        '<vlan><vlan-id>20</vlan-id><description>voice</description></vlan></vlans>',
    );

    await s.restore(before);
    expect((await s.fetchConfig()).text).toBe(before.text);
  });

  // The audit's reproduction: a stack whose service 0 adds ACL entry 10 (deny) and service 1 entry 20 (permit).
  describe('a two-service stack deployed through the controller and an agent', () => {
    let c: TestController;
    let agent: Awaited<ReturnType<typeof agentFor>>;
    beforeAll(async () => {
      c = await startTestController({ config: { jobs: { sweepIntervalMs: 200 }, deployments: { sweepIntervalMs: 200, staleMs: 300 } } });
    });
    afterAll(async () => {
      await agent?.stop();
      await c?.close();
    });

    it('leaves both entries on the device, and a rollback takes both away', async () => {
      const org = await c.createOrgUser(['org_admin']);
      const token = org.token;
      agent = await agentFor(c, org);
      const profile = await api(
        c,
        token,
        'POST',
        '/api/profiles',
        { name: 'netconfd', username: peer.username, private_key: peer.privateKey, netconf_port: peer.port, automation_transport: 'netconf' },
        201,
      );
      const device = await api(
        c,
        token,
        'POST',
        '/api/devices',
        { name: 'netconfd', host: peer.host, device_type: 'generic', profile_id: profile.id },
        201,
      );
      const template = (name: string, entry: string) =>
        api(
          c,
          token,
          'POST',
          '/api/config/templates',
          { name, platform: 'ietf-netconf', config_format: 'xml', operation: 'merge', source: acl(entry) },
          201,
        );
      const deny = await template('acl-deny', '<entry><seq>{{ seq }}</seq><action>deny</action><src>{{ src }}</src></entry>');
      const permit = await template('acl-permit', '<entry><seq>{{ seq }}</seq><action>permit</action></entry>');
      const stack = await api(
        c,
        token,
        'POST',
        '/api/config/stacks',
        {
          name: 'edge-acl',
          services: [
            { template_id: deny.id, order: 0, variables: { seq: 10, src: '192.0.2.0/24' } },
            { template_id: permit.id, order: 1, variables: { seq: 20 } },
          ],
        },
        201,
      );
      const before = (await s.fetchConfig()).text;
      const created = await api(
        c,
        token,
        'POST',
        '/api/config/deployments',
        { stack_id: stack.id, name: 'edge-acl', target_devices: [{ device_id: device.id }] },
        201,
      );
      const done = await waitFor(c, token, created.id);
      expect(done.status, JSON.stringify(done.devices)).toBe('completed');
      expect(await compact()).toContain(`<acl><name>edge-in</name>${DENY}${PERMIT}</acl>`);

      await api(c, token, 'POST', `/api/config/deployments/${done.id}/rollback`);
      expect((await waitFor(c, token, done.id)).status).toBe('rolled_back');
      expect((await s.fetchConfig()).text).toBe(before);
    }, 90_000);
  });
});

// Deployments' dry run (docs/deployments.md): preview() edits the candidate and discards it.
describe('NETCONF dry run against netconfd', () => {
  it('previews a merge in the candidate and discards it: running and candidate unchanged', async () => {
    const running = await s.getConfig('running');
    const preview = await s.preview([
      { operation: 'merge', config_format: 'xml', config: `<settings xmlns="${NS}"><hostname>dry-run-host</hostname></settings>` },
    ]);
    expect(preview.before).toBe(running);
    expect(preview.after).toContain('<hostname>dry-run-host</hostname>');
    expect(unifiedDiff(preview.before, preview.after).diff).toMatch(/^\+\s*<hostname>dry-run-host<\/hostname>$/m);
    expect(await s.getConfig('running')).toBe(running);
    expect(await s.getConfig('candidate')).toBe(running);
    // The candidate lock is released: a real change can follow in the same session.
    await s.apply([{ operation: 'merge', config_format: 'xml', config: `<settings xmlns="${NS}"><hostname>after-dry-run</hostname></settings>` }]);
    expect(await s.getConfig('running')).toContain('<hostname>after-dry-run</hostname>');
  });
});

// Why the client sends <get-my-session> when a yuma server's first reply is late (client.ts).
describe("netconfd's read of a hello and an rpc that arrive together", () => {
  /** A bare "netconf" subsystem channel to the peer once its <hello> came, and the message-ids of the replies on it. */
  async function rawChannel(): Promise<{ channel: ClientChannel; replies: string[]; end(): void }> {
    const ssh = new ssh2.Client();
    await new Promise<void>((resolve, reject) => {
      ssh.once('ready', resolve).once('error', reject);
      ssh.connect({ host: peer.host, port: peer.port, username: peer.username, privateKey: peer.privateKey });
    });
    const channel = await new Promise<ClientChannel>((resolve, reject) => ssh.subsys('netconf', (err, ch) => (err ? reject(err) : resolve(ch))));
    const decoder = new FrameDecoder('eom');
    const replies: string[] = [];
    // As the driver does, the rpc goes once the server's hello is in: written before it, on a loaded
    // machine, netconfd can take both in before its session is set up and answer nothing at all.
    await new Promise<void>((resolve) =>
      channel.on('data', (d: Buffer) => {
        for (const msg of decoder.pushAll(d)) {
          if (msg.includes('<hello')) {
            decoder.setFraming('chunked');
            resolve();
          } else replies.push(/message-id="(\d+)"/.exec(msg)?.[1] ?? '?');
        }
      }),
    );
    return { channel, replies, end: () => ssh.end() };
  }
  const rpc = (id: number, op: string): Buffer => encodeMessage(`<rpc xmlns="${NS_BASE}" message-id="${id}">${op}</rpc>`, 'chunked');
  const until = async (done: () => boolean): Promise<void> => {
    while (!done()) await new Promise((r) => setTimeout(r, 20));
  };

  it('answers the rpc only once more input arrives, and <get-my-session> is such input', async () => {
    const { channel, replies, end } = await rawChannel();
    try {
      const caps = [CAP.base10, CAP.base11].map((c) => `<capability>${c}</capability>`).join('');
      const hello = `<hello xmlns="${NS_BASE}"><capabilities>${caps}</capabilities></hello>`;
      channel.write(Buffer.concat([encodeMessage(hello, 'eom'), rpc(1, '<get-config><source><running/></source></get-config>')]));
      await new Promise((r) => setTimeout(r, 1000));
      expect(replies).toEqual([]); // netconfd read both, handled the hello, and waits for more input
      channel.write(rpc(2, `<get-my-session xmlns="${YUMA_MYSESSION}"/>`));
      await until(() => replies.length === 2);
      expect(replies).toEqual(['1', '2']);
    } finally {
      end();
    }
  });
});
