import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { ConfigChange, DeviceTarget } from '../../agent/src/drivers/types';
import { driverFailure, loopbackTarget } from './fixtures/netconf/testkit';
import {
  CAP,
  FrameDecoder,
  FramingError,
  NetconfClient,
  buildEditContent,
  createNetconfDriver,
  encodeMessage,
  netconfDriver,
} from '../../agent/src/drivers/netconf';
import { startNetconfDevice, startNetconfFleet, type NetconfDevice, type NetconfDeviceOptions } from '../sim/netconf/device';
import { readableKeyPair } from '../sim/ssh/device';

const NS = 'urn:example:sim';
const INITIAL =
  `<interfaces xmlns="${NS}"><interface><name>eth0</name><mtu>1500</mtu><description>uplink</description></interface>` +
  `<interface><name>eth1</name><mtu>1500</mtu></interface></interfaces><system xmlns="${NS}"><hostname>r1</hostname></system>`;

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((o) => o.close()));
});

async function device(opts: NetconfDeviceOptions = {}): Promise<NetconfDevice> {
  const d = await startNetconfDevice({ initialConfig: INITIAL, ...opts });
  open.push(d);
  return d;
}

function target(d: { port: number }, credentials: DeviceTarget['credentials'] = { username: 'admin', password: 'admin' }): DeviceTarget {
  return loopbackTarget({ netconf: d.port }, { credentials });
}

async function session(d: NetconfDevice, limits = {}) {
  const s = await netconfDriver.open(target(d), limits);
  open.push(s);
  return s;
}

/** Wait until the device has noticed every session ended (not a timed assertion: it only waits). */
async function untilNoSessions(d: NetconfDevice): Promise<void> {
  while (d.activeSessions() > 0) await new Promise((r) => setTimeout(r, 10));
}

/** A plain NETCONF client session of the device (closed after the test). */
async function clientOf(d: NetconfDevice): Promise<NetconfClient> {
  const client = await NetconfClient.connect({
    host: '127.0.0.1',
    port: d.port,
    username: 'admin',
    password: 'admin',
    limits: { connectTimeoutMs: 5000, commandTimeoutMs: 5000, idleTimeoutMs: 5000, commitTimeoutMs: 5000, keepaliveIntervalMs: 5000 },
  });
  open.push(client);
  return client;
}

/** Another NETCONF session of the device, holding the candidate's lock. */
async function lockedByAnother(d: NetconfDevice): Promise<NetconfClient> {
  const other = await clientOf(d);
  await other.rpc('<lock><target><candidate/></target></lock>', 'lock candidate');
  return other;
}

const change = (operation: ConfigChange['operation'], config: string, target_path?: string): ConfigChange => ({
  operation,
  config,
  config_format: 'xml',
  target_path,
});

describe('framing parser', () => {
  const a = `<rpc-reply message-id="1"><data>${'x'.repeat(40)}é€😀</data></rpc-reply>`;
  const b = '<rpc-reply message-id="2"><ok/></rpc-reply>';

  /** Two messages, the first spread over several chunks with a chunk edge inside a UTF-8 character. */
  function multiChunkStream(): Buffer {
    const body = Buffer.from(a, 'utf8');
    const cut1 = 7;
    const cut2 = body.indexOf(Buffer.from('€')) + 1; // inside the 3-byte euro sign
    const parts = [body.subarray(0, cut1), body.subarray(cut1, cut2), body.subarray(cut2)];
    const first = Buffer.concat([...parts.flatMap((p) => [Buffer.from(`\n#${p.length}\n`), p]), Buffer.from('\n##\n')]);
    return Buffer.concat([first, encodeMessage(b, 'chunked')]);
  }

  it('decodes multi-chunk messages split at every possible byte boundary', () => {
    const stream = multiChunkStream();
    for (let i = 0; i <= stream.length; i++) {
      const d = new FrameDecoder('chunked');
      const got = [...d.pushAll(stream.subarray(0, i)), ...d.pushAll(stream.subarray(i))];
      expect(got, `split at ${i}`).toEqual([a, b]);
      expect(d.pendingBytes).toBe(0);
    }
  });

  it('decodes a stream fed one byte at a time and in seeded random pieces', () => {
    const stream = Buffer.concat([multiChunkStream(), multiChunkStream()]);
    const oneByOne = new FrameDecoder('chunked');
    const got: string[] = [];
    for (const byte of stream) got.push(...oneByOne.pushAll(Buffer.from([byte])));
    expect(got).toEqual([a, b, a, b]);

    let seed = 42;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let round = 0; round < 50; round++) {
      const d = new FrameDecoder('chunked');
      const out: string[] = [];
      for (let i = 0; i < stream.length;) {
        const n = 1 + rand(20);
        out.push(...d.pushAll(stream.subarray(i, i + n)));
        i += n;
      }
      expect(out).toEqual([a, b, a, b]);
    }
  });

  it('decodes end-of-message framing with the delimiter split across reads', () => {
    const stream = Buffer.concat([encodeMessage(a, 'eom'), encodeMessage(b, 'eom')]);
    for (let i = 0; i <= stream.length; i++) {
      const d = new FrameDecoder('eom');
      expect([...d.pushAll(stream.subarray(0, i)), ...d.pushAll(stream.subarray(i))]).toEqual([a, b]);
    }
  });

  it('switches from end-of-message to chunked between two messages of one read', () => {
    const hello = '<hello xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"/>';
    const d = new FrameDecoder('eom');
    d.push(Buffer.concat([encodeMessage(hello, 'eom'), encodeMessage(b, 'chunked')]));
    expect(d.next()).toBe(hello);
    d.setFraming('chunked');
    expect(d.next()).toBe(b);
    expect(d.next()).toBeUndefined();
  });

  it.each([
    ['a size that is not a number', '\n#abc\n<x/>\n##\n'],
    ['a zero size', '\n#0\n\n##\n'],
    ['a size above 4294967295', '\n#4294967296\nx'],
    ['end-of-chunks before any chunk', '\n##\n'],
    ['missing LF before a chunk header', '#5\nhello\n##\n'],
    ['a chunk longer than announced', '\n#3\nhello\n##\n'],
  ])('rejects %s', (_what, bytes) => {
    const d = new FrameDecoder('chunked');
    expect(() => d.pushAll(Buffer.from(bytes, 'latin1'))).toThrow(FramingError);
  });

  it('rejects non-XML bytes in end-of-message mode', () => {
    expect(() => new FrameDecoder('eom').pushAll(Buffer.from('garbage]]>]]>'))).toThrow(FramingError);
  });
});

describe('edit-config content', () => {
  const NC = 'xmlns:nc="urn:ietf:params:xml:ns:netconf:base:1.0"';
  const acl = (entries: string): string => `<acls xmlns="${NS}"><acl><name>A</name>${entries}</acl></acls>`;

  it('marks replace and delete, and keeps each change whole, in order, even where changes share containers', () => {
    const xml = buildEditContent([
      change('merge', `<interfaces xmlns="${NS}"><interface><name>eth0</name><mtu>9000</mtu></interface></interfaces>`),
      change('delete', `<interfaces xmlns="${NS}"><interface><name>eth1</name></interface></interfaces>`, '/interfaces/interface[name=eth1]'),
      change('replace', `<system xmlns="${NS}"><hostname>r2</hostname></system>`),
    ]);
    expect(xml).toBe(
      `<interfaces xmlns="${NS}"><interface><name>eth0</name><mtu>9000</mtu></interface></interfaces>` +
        `<interfaces xmlns="${NS}"><interface ${NC} nc:operation="delete"><name>eth1</name></interface></interfaces>` +
        `<system xmlns="${NS}" ${NC} nc:operation="replace"><hostname>r2</hostname></system>`,
    );
  });

  // The audit's case: entries of a list keyed by seq, one per service, were fused into one.
  it('keeps list entries keyed by seq apart: one per change, each with only its own leaves', () => {
    const deny = '<entry><seq>10</seq><action>deny</action><src>192.0.2.0/24</src></entry>';
    const permit = '<entry><seq>20</seq><action>permit</action></entry>';
    expect(buildEditContent([change('merge', acl(deny)), change('merge', acl(permit))])).toBe(acl(deny) + acl(permit));
  });

  it('keeps list entries keyed by vlan-id apart, and a delete of one marks only that one', () => {
    const vlans = (v: string): string => `<vlans xmlns="${NS}">${v}</vlans>`;
    const xml = buildEditContent([
      change('merge', vlans('<vlan><vlan-id>10</vlan-id><description>users</description></vlan>')),
      change('delete', vlans('<vlan><vlan-id>20</vlan-id></vlan>'), '/vlans/vlan[vlan-id=20]'),
      change('merge', vlans('<vlan><vlan-id>30</vlan-id><description>voice</description></vlan>')),
    ]);
    expect(xml).toBe(
      vlans('<vlan><vlan-id>10</vlan-id><description>users</description></vlan>') +
        vlans(`<vlan ${NC} nc:operation="delete"><vlan-id>20</vlan-id></vlan>`) +
        vlans('<vlan><vlan-id>30</vlan-id><description>voice</description></vlan>'),
    );
  });

  it('leaves two changes to the same list entry for the device to combine, in change order', () => {
    const first = acl('<entry><seq>10</seq><action>deny</action></entry>');
    const second = acl('<entry><seq>10</seq><src>198.51.100.0/24</src></entry>');
    const replaced = acl(`<entry ${NC} nc:operation="replace"><seq>10</seq><action>permit</action></entry>`);
    expect(
      buildEditContent([
        change('merge', first),
        change('merge', second),
        change('replace', acl('<entry><seq>10</seq><action>permit</action></entry>'), '/acls/acl[name=A]/entry[seq=10]'),
      ]),
    ).toBe(first + second + replaced);
  });

  it('keeps sibling entries of one fragment distinct, and target_path marks only the entry it selects', () => {
    const e = (seq: number, action: string): string => `<entry><seq>${seq}</seq><action>${action}</action></entry>`;
    const three = acl(e(10, 'deny') + e(20, 'permit') + e(30, 'deny'));
    expect(buildEditContent([change('merge', three)])).toBe(three);
    expect(buildEditContent([change('replace', three, '/acls/acl[name=A]/entry[seq=20]')])).toBe(
      acl(`${e(10, 'deny')}<entry ${NC} nc:operation="replace"><seq>20</seq><action>permit</action></entry>${e(30, 'deny')}`),
    );
    // ...also after an earlier change to the same list, and as top-level entries of a fragment.
    const five = acl(e(5, 'permit'));
    expect(buildEditContent([change('merge', five), change('merge', three)])).toBe(five + three);
    const route = (hop: string): string =>
      `<route xmlns="${NS}"><prefix>0.0.0.0/0</prefix><next-hop>${hop}</next-hop><tag>a</tag><tag>b</tag></route>`;
    expect(buildEditContent([change('merge', route('192.0.2.1') + route('192.0.2.2'))])).toBe(route('192.0.2.1') + route('192.0.2.2'));
  });

  it('keeps name-keyed entries apart too, and takes a fragment with its own operation attributes as written', () => {
    const ifs = (i: string): string => `<interfaces xmlns="${NS}">${i}</interfaces>`;
    const marked = ifs(`<interface ${NC} nc:operation="remove"><name>eth1</name></interface>`);
    const xml = buildEditContent([
      change('merge', ifs('<interface><name>eth0</name><mtu>9000</mtu></interface><interface><name>eth2</name><mtu>1400</mtu></interface>')),
      change('replace', marked, '/interfaces/interface[name=eth1]'),
    ]);
    expect(xml).toBe(ifs('<interface><name>eth0</name><mtu>9000</mtu></interface><interface><name>eth2</name><mtu>1400</mtu></interface>') + marked);
  });

  it('rejects malformed XML and a target_path that selects nothing', () => {
    expect(() => buildEditContent([change('merge', '<a><b></a>')])).toThrow(/not well-formed/);
    expect(() => buildEditContent([change('delete', '<a><b>1</b></a>', '/a/c')])).toThrow(/selects no element/);
  });
});

describe('NETCONF driver against the simulator', () => {
  it('uses chunked framing when both sides speak base:1.1 and fetches a stable canonical config', async () => {
    const d = await device({ maxChunk: 7, writeSplit: 3 });
    const s = await session(d);
    expect(s.framing).toBe('chunked');
    expect(s.capabilities).toContain(CAP.candidate);
    const first = await s.fetchConfig();
    expect(first.format).toBe('xml');
    expect(first.via).toBe('netconf');
    expect(first.text).toContain('<hostname>r1</hostname>');
    expect(first.text).toContain('    <name>eth0</name>\n');
    expect((await s.fetchConfig()).text).toBe(first.text);
  });

  it('falls back to end-of-message framing with a base:1.0-only device', async () => {
    const d = await device({ base11: false, writeSplit: 5 });
    const s = await session(d);
    expect(s.framing).toBe('eom');
    await s.apply([change('merge', `<system xmlns="${NS}"><hostname>eom-box</hostname></system>`)]);
    expect(d.running()).toContain('<hostname>eom-box</hostname>');
  });

  it('uses end-of-message framing when the client does not offer base:1.1', async () => {
    const d = await device();
    const s = await createNetconfDriver({ offerBase11: false }).open(target(d));
    open.push(s);
    expect(s.framing).toBe('eom');
    expect((await s.fetchConfig()).text).toContain('eth0');
  });

  // yuma123's netconfd leaves an rpc that came in one read with our hello unanswered until more input.
  it('sends <get-my-session> to a yuma server whose first reply is late, and gets both replies', async () => {
    const d = await device({ yumaMySession: true, faults: { holdFirstRpc: true } });
    const s = await session(d);
    expect((await s.fetchConfig()).text).toContain('eth0');
    expect(d.rpcLog).toEqual(['get-config', 'get-my-session']);
    expect((await s.fetchConfig()).text).toContain('eth0'); // only the first rpc is watched
    expect(d.rpcLog).toEqual(['get-config', 'get-my-session', 'get-config']);
  });

  it('sends nothing extra when the first reply is prompt, or to a server that is not yuma', async () => {
    const yuma = await device({ yumaMySession: true });
    await (await session(yuma)).fetchConfig();
    const other = await device({ faults: { holdFirstRpc: true } });
    // Its first rpc times out after the nudge delay (500 ms): a nudge would have released it into the log.
    const stuck = await driverFailure((await session(other, { commandTimeoutMs: 800 })).fetchConfig());
    expect(stuck.kind).toBe('timeout');
    expect(yuma.rpcLog).toEqual(['get-config']);
    expect(other.rpcLog).toEqual([]);
  });

  it('applies merge, replace and delete in one candidate edit and a confirmed commit', async () => {
    const d = await device();
    const s = await session(d);
    await s.apply([
      change('merge', `<interfaces xmlns="${NS}"><interface><name>eth0</name><mtu>9000</mtu></interface></interfaces>`),
      change('delete', `<interfaces xmlns="${NS}"><interface><name>eth1</name></interface></interfaces>`, '/interfaces/interface[name=eth1]'),
      change('replace', `<system xmlns="${NS}"><hostname>r2</hostname><domain>lab</domain></system>`),
    ]);
    expect(d.rpcLog).toEqual(['lock', 'edit-config', 'commit', 'commit', 'unlock']);
    const running = d.running();
    expect(running).toContain('<mtu>9000</mtu>');
    expect(running).toContain('<description>uplink</description>'); // merge kept the sibling leaf
    expect(running).not.toContain('eth1');
    expect(running).toContain('<hostname>r2</hostname>');
    expect(running).toContain('<domain>lab</domain>');
    expect(d.confirmPending()).toBe(false);
    expect(d.lockHolder('candidate')).toBeUndefined();
  });

  it('commits once without :confirmed-commit', async () => {
    const d = await device({ confirmedCommit: false });
    const s = await session(d);
    await s.apply([change('merge', `<system xmlns="${NS}"><hostname>plain</hostname></system>`)]);
    expect(d.rpcLog).toEqual(['lock', 'edit-config', 'commit', 'unlock']);
    expect(d.running()).toContain('<hostname>plain</hostname>');
  });

  it('edits running directly on a :writable-running device without a candidate', async () => {
    const d = await device({ candidate: false });
    const s = await session(d);
    expect(s.capabilities).toContain(CAP.writableRunning);
    await s.apply([
      change(
        'replace',
        `<interfaces xmlns="${NS}"><interface><name>eth1</name><mtu>1400</mtu></interface></interfaces>`,
        '/interfaces/interface[name=eth1]',
      ),
    ]);
    expect(d.rpcLog).toEqual(['lock', 'edit-config', 'unlock']);
    expect(d.running()).toContain('<mtu>1400</mtu>');
    expect(d.running()).toContain('<description>uplink</description>');
  });

  it('reverts a confirmed commit when the session dies before the confirming commit', async () => {
    const d = await device({ faults: { dropOnConfirmingCommit: true } });
    const before = d.running();
    const s = await session(d);
    const err = await driverFailure(s.apply([change('merge', `<system xmlns="${NS}"><hostname>lost</hostname></system>`)]));
    expect(err.kind).toBe('protocol');
    expect(err.message).toMatch(/closed/);
    await untilNoSessions(d);
    expect(d.running()).toBe(before);
    expect(d.confirmPending()).toBe(false);
  });

  it('times out on a confirming commit that never answers, and the device reverts', async () => {
    const d = await device({ faults: { hang: 'confirming-commit' } });
    const before = d.running();
    const s = await session(d, { commandTimeoutMs: 400, commitTimeoutMs: 400 });
    const err = await driverFailure(s.apply([change('merge', `<system xmlns="${NS}"><hostname>hung</hostname></system>`)]));
    expect(err.kind).toBe('timeout');
    expect(err.message).toMatch(/confirming commit .* timed out after 400ms/);
    await untilNoSessions(d);
    expect(d.running()).toBe(before);
  });

  it('waits for a commit past the command limit, up to the commit limit: the device may work on it in silence', async () => {
    // Cut off at the command limit, a commit still running on the device would be reported failed
    // and a restore pushed over it.
    const d = await device({ faults: { slowReply: { op: 'commit', ms: 700 } } });
    const s = await session(d, { commandTimeoutMs: 300, commitTimeoutMs: 5000 });
    await s.apply([change('merge', `<system xmlns="${NS}"><hostname>slow-commit</hostname></system>`)]);
    expect(d.running()).toContain('<hostname>slow-commit</hostname>');
    const impatient = await session(d, { commandTimeoutMs: 300, commitTimeoutMs: 300 });
    const err = await driverFailure(impatient.apply([change('merge', `<system xmlns="${NS}"><hostname>too-slow</hostname></system>`)]));
    expect(err.message).toMatch(/commit .* timed out after 300ms/);
  });

  it('reports lock-denied with the session holding the lock', async () => {
    const d = await device();
    const other = await lockedByAnother(d);
    const s = await session(d);
    const err = await driverFailure(s.apply([change('merge', `<system xmlns="${NS}"><hostname>x</hostname></system>`)]));
    expect(err.kind).toBe('device');
    expect(err.message).toContain('lock candidate');
    expect(err.message).toContain('lock-denied');
    expect(err.message).toContain(`<session-id>${other.sessionId}</session-id>`);
    expect(d.running()).not.toContain('<hostname>x</hostname>');
  });

  it("waits for a lock another session holds briefly (a dry run's preview), then applies", async () => {
    const d = await device();
    const other = await lockedByAnother(d);
    const s = await session(d);
    const applying = s.apply([change('merge', `<system xmlns="${NS}"><hostname>after-wait</hostname></system>`)]);
    // The other session's lock, then the push's first try and at least one retry.
    while (d.rpcLog.filter((op) => op === 'lock').length < 3) await new Promise((r) => setTimeout(r, 10));
    await other.rpc('<unlock><target><candidate/></target></unlock>', 'unlock candidate');
    await applying;
    expect(d.running()).toContain('<hostname>after-wait</hostname>');
  });

  it('surfaces rpc-error details, discards the candidate and unlocks', async () => {
    const d = await device({ faults: { rejectMarker: 'FORBIDDEN' } });
    const before = d.running();
    const s = await session(d);
    const err = await driverFailure(
      s.apply([
        change('merge', `<interfaces xmlns="${NS}"><interface><name>eth0</name><description>FORBIDDEN</description></interface></interfaces>`),
      ]),
    );
    expect(err.kind).toBe('device');
    expect(err.message).toContain('edit-config candidate');
    expect(err.message).toContain('invalid-value (application, error)');
    expect(err.message).toContain('at /interfaces/interface/description');
    expect(err.message).toContain('value "FORBIDDEN" is not allowed');
    expect(err.message).toContain('<bad-element>description</bad-element>');
    expect(d.rpcLog).toEqual(['lock', 'edit-config', 'discard-changes', 'unlock']);
    expect(d.running()).toBe(before);
    expect(d.candidate()).toBe(before);
    expect(d.lockHolder('candidate')).toBeUndefined();
  });

  it('reports an edit failure on a running-only device and leaves running unchanged', async () => {
    const d = await device({ candidate: false, faults: { failOnEdit: true } });
    const before = d.running();
    const s = await session(d);
    const err = await driverFailure(s.apply([change('merge', `<system xmlns="${NS}"><hostname>x</hostname></system>`)]));
    expect(err.kind).toBe('device');
    expect(err.message).toMatch(/operation-failed .*injected edit-config failure/);
    expect(d.running()).toBe(before);
    expect(d.lockHolder('running')).toBeUndefined();
  });

  it('reports a refused edit of a device without :rollback-on-error as partial: the part before the error went in', async () => {
    const changes = [
      change('merge', `<interfaces xmlns="${NS}"><interface><name>eth0</name><mtu>9000</mtu></interface></interfaces>`),
      change('merge', `<system xmlns="${NS}"><hostname>FORBIDDEN</hostname></system>`),
    ];
    // Stop-on-error (RFC 6241 default): the first subtree stays, the second is refused.
    const d = await device({ candidate: false, rollbackOnError: false, faults: { rejectMarker: 'FORBIDDEN' } });
    const s = await session(d);
    expect(s.capabilities).not.toContain(CAP.rollbackOnError);
    const backup = await s.fetchConfig();
    const err = await driverFailure(s.apply(changes));
    expect(err.kind).toBe('device');
    expect(err.partial).toBe(true);
    expect(err.message).toMatch(/value "FORBIDDEN" is not allowed.*without :rollback-on-error the device keeps what it applied before the error/);
    expect(d.running()).toContain('<mtu>9000</mtu>');
    expect(d.running()).toContain('<hostname>r1</hostname>');
    expect(d.lockHolder('running')).toBeUndefined();
    await s.restore(backup);
    expect((await s.fetchConfig()).text).toBe(backup.text);

    // With :rollback-on-error the same edit is asked to roll back: nothing went in, nothing partial.
    const atomic = await device({ candidate: false, faults: { rejectMarker: 'FORBIDDEN' } });
    const before = atomic.running();
    const plain = await driverFailure((await session(atomic)).apply(changes));
    expect(plain.partial).toBe(false);
    expect(atomic.running()).toBe(before);
  });

  it('restores a fetched config with replace semantics', async () => {
    for (const candidate of [true, false]) {
      const d = await device({ candidate });
      const s = await session(d);
      const backup = await s.fetchConfig();
      await s.apply([
        change(
          'merge',
          `<interfaces xmlns="${NS}"><interface><name>eth9</name><mtu>100</mtu></interface></interfaces><extra xmlns="${NS}"><on>true</on></extra>`,
        ),
        change('delete', `<system xmlns="${NS}"/>`),
      ]);
      expect(d.running()).toContain('eth9');
      expect(d.running()).not.toContain('hostname');
      await s.restore(backup);
      expect((await s.fetchConfig()).text).toBe(backup.text);
      expect(d.running()).not.toContain('extra');
    }
  });

  it("keeps a leaf's leading, trailing and inner whitespace through a backup and its restore", async () => {
    // A banner's final newline or a description's trailing space is part of the value (YANG strings
    // keep whitespace): a backup that trimmed it would restore a different value. Pretty-printed
    // layout between elements is not a value and stays out of the canonical text.
    const banner = '  Authorised use only \n  line two\n';
    const d = await device({
      initialConfig: `<system xmlns="${NS}">\n  <hostname>r1</hostname>\n  <banner>${banner}</banner>\n  <motd>\n  </motd>\n</system>`,
    });
    const s = await session(d);
    const backup = await s.fetchConfig();
    expect(backup.text).toContain(`<banner>${banner}</banner>`);
    expect(backup.text).toContain('<motd/>');
    await s.apply([change('merge', `<system xmlns="${NS}"><banner>changed</banner></system>`)]);
    await s.restore(backup);
    const restored = await s.fetchConfig();
    expect(restored.text).toBe(backup.text);
    expect(d.running()).toContain(`<banner>${banner}</banner>`);
  });

  it('correlates concurrent rpcs by message-id', async () => {
    const d = await device({ maxChunk: 11, writeSplit: 1 });
    const c = await clientOf(d);
    const replies = await Promise.all([
      c.rpc('<get-config><source><running/></source></get-config>', 'get-config running'),
      c.rpc('<lock><target><running/></target></lock>', 'lock'),
      c.rpc('<get-config><source><candidate/></source></get-config>', 'get-config candidate'),
      c.rpc('<unlock><target><running/></target></unlock>', 'unlock'),
    ]);
    expect(replies.map((r) => r.attrs['message-id'])).toEqual(['101', '102', '103', '104']);
    const err = await driverFailure(c.rpc('<frobnicate/>', 'frobnicate'));
    expect(err.message).toMatch(/operation-not-supported \(protocol, error\).*frobnicate/);
  });

  it('logs in with a private key', async () => {
    const keys = readableKeyPair();
    const d = await device({ authorizedKeys: [keys.public], password: 'not-used' });
    const s = await netconfDriver.open(target(d, { username: 'admin', private_key: keys.private }));
    open.push(s);
    expect((await s.fetchConfig()).text).toContain('eth0');
  });

  it('masks the password in the transcript', async () => {
    const d = await device({ password: 's3cret-pw', initialConfig: `<secret xmlns="${NS}">s3cret-pw</secret>` });
    const lines: string[] = [];
    const s = await netconfDriver.open(target(d, { username: 'admin', password: 's3cret-pw' }), {}, { write: (_dir, text) => lines.push(text) });
    open.push(s);
    await s.fetchConfig();
    expect(lines.join('\n')).toContain('<secret xmlns="urn:example:sim">******</secret>');
    expect(lines.join('\n')).not.toContain('s3cret-pw');
  });
});

describe('NETCONF driver failure kinds', () => {
  it('auth: wrong password', async () => {
    const d = await device();
    const err = await driverFailure(netconfDriver.open(target(d, { username: 'admin', password: 'wrong' })));
    expect(err.kind).toBe('auth');
    expect(err.message).toContain('admin');
  });

  it('refused: nothing listening', async () => {
    const srv = net.createServer();
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
    const port = (srv.address() as net.AddressInfo).port;
    await new Promise<void>((r) => srv.close(() => r()));
    const err = await driverFailure(netconfDriver.open(target({ port })));
    expect(err.kind).toBe('refused');
    expect(err.message).toContain('ECONNREFUSED');
  });

  it('timeout: no hello within the connect limit', async () => {
    const d = await device({ faults: { hang: 'hello' } });
    const err = await driverFailure(netconfDriver.open(target(d), { connectTimeoutMs: 300 }));
    expect(err.kind).toBe('timeout');
    expect(err.message).toMatch(/no NETCONF <hello> .* within 300ms/);
  });

  it('timeout: an rpc without reply within the command limit', async () => {
    const d = await device({ faults: { hang: 'get-config' } });
    const s = await session(d, { commandTimeoutMs: 300 });
    const err = await driverFailure(s.fetchConfig());
    expect(err.kind).toBe('timeout');
    expect(err.message).toMatch(/get-config running .* timed out after 300ms/);
  });

  it('timeout: a reply that stops half way is cut off by the idle limit', async () => {
    const d = await device({ faults: { stallMidReply: 'get-config' } });
    const s = await session(d, { idleTimeoutMs: 250, commandTimeoutMs: 30_000 });
    const err = await driverFailure(s.fetchConfig());
    expect(err.kind).toBe('timeout');
    expect(err.message).toMatch(/reply to get-config running .* stalled: no data for 250ms mid-message/);
  });

  it('timeout: an SSH server that never speaks', async () => {
    const sockets: net.Socket[] = [];
    const srv = net.createServer((sock) => sockets.push(sock));
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
    const port = (srv.address() as net.AddressInfo).port;
    try {
      const err = await driverFailure(netconfDriver.open(target({ port }), { connectTimeoutMs: 300 }));
      expect(err.kind).toBe('timeout');
      expect(err.message).toMatch(/SSH handshake\/authentication .* timed out/);
    } finally {
      sockets.forEach((s) => s.destroy());
      await new Promise<void>((r) => srv.close(() => r()));
    }
  });

  it('protocol: garbage instead of a hello', async () => {
    const d = await device({ faults: { garbage: 'hello' } });
    const err = await driverFailure(netconfDriver.open(target(d)));
    expect(err.kind).toBe('protocol');
    expect(err.message).toMatch(/expected an XML message/);
  });

  it('protocol: garbage instead of a chunked reply', async () => {
    const d = await device({ faults: { garbage: 'rpc' } });
    const s = await session(d);
    const err = await driverFailure(s.fetchConfig());
    expect(err.kind).toBe('protocol');
    expect(err.message).toMatch(/bad chunked framing/);
  });
});

describe('NETCONF simulator fleet', () => {
  it('starts many devices cheaply, each with its own datastore', async () => {
    const fleet = await startNetconfFleet(20, (i) => ({
      initialConfig: `<system xmlns="${NS}"><hostname>r${i}</hostname></system>`,
      base11: i % 2 === 0,
    }));
    open.push(fleet);
    const texts = await Promise.all(
      [0, 7, 19].map(async (i) => {
        const s = await session(fleet.devices[i]);
        return (await s.fetchConfig()).text;
      }),
    );
    expect(texts[0]).toContain('<hostname>r0</hostname>');
    expect(texts[1]).toContain('<hostname>r7</hostname>');
    expect(texts[2]).toContain('<hostname>r19</hostname>');
    expect(new Set(fleet.devices.map((d) => d.port)).size).toBe(20);
  });
});
