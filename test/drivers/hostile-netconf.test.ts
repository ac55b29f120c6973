/**
 * A NETCONF "device" that sends garbage: no hello, a broken hello, bad chunk headers, chunks
 * that never end, `]]>]]>` inside data, XML that is not XML, replies to another message-id, a
 * reply larger than the size bound. Opening and fetching must fail with a DriverError saying what
 * was wrong, within the limits, with bounded memory and without an uncaught exception.
 */
import type { AddressInfo } from 'node:net';
import ssh2, { type ServerChannel } from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CAP, FrameDecoder, createNetconfDriver, netconfDriver } from '../../agent/src/drivers/netconf';
import { readableKeyPair } from '../sim/ssh/device';
import { expectNothingUncaught, fetchFailure, loopbackTarget } from './fixtures/netconf/testkit';

const LIMITS = { connectTimeoutMs: 2000, commandTimeoutMs: 1000, idleTimeoutMs: 1000, keepaliveIntervalMs: 5000 };
const EOM = ']]>]]>';
const hello = (...caps: string[]) =>
  `<hello xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><capabilities>${caps.map((c) => `<capability>${c}</capability>`).join('')}` +
  `</capabilities><session-id>7</session-id></hello>${EOM}`;
const chunked = (xml: string) => `\n#${Buffer.byteLength(xml)}\n${xml}\n##\n`;
const reply = (id: string, body: string) => `<rpc-reply xmlns="urn:ietf:params:xml:ns:netconf:base:1.0" message-id="${id}">${body}</rpc-reply>`;

/** How the device behaves on one session: its hello, and what it does with each rpc. */
interface Script {
  hello: string | null;
  onRpc?: (id: string, ch: ServerChannel) => void;
}

let script: Script = { hello: null };
let server: ssh2.Server;
let port: number;

function serve(ch: ServerChannel): void {
  const s = script;
  ch.on('error', () => undefined);
  if (s.hello !== null) ch.write(s.hello);
  let seen = '';
  ch.on('data', (d: Buffer) => {
    seen += d.toString('latin1');
    for (let m = /<rpc [^>]*message-id="(\d+)"/.exec(seen); m; m = /<rpc [^>]*message-id="(\d+)"/.exec(seen)) {
      seen = seen.slice(m.index + m[0].length);
      if (ch.writable) s.onRpc?.(m[1], ch);
    }
  });
}

beforeAll(async () => {
  server = new ssh2.Server({ hostKeys: [readableKeyPair().private] }, (conn) => {
    conn.on('error', () => undefined);
    conn.on('authentication', (ctx) => (ctx.method === 'password' ? ctx.accept() : ctx.reject(['password'])));
    conn.on('ready', () => conn.on('session', (accept) => accept().on('subsystem', (ok, _no, info) => info.name === 'netconf' && serve(ok()))));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
});

expectNothingUncaught();

/** The DriverError of open() + fetchConfig() (+ close) against `s`, checked to come within `withinMs`. */
async function failure(s: Script, withinMs: number, driver = netconfDriver): Promise<string> {
  script = s;
  const e = await fetchFailure(driver.open(loopbackTarget({ netconf: port }), LIMITS), withinMs);
  return `${e.kind}: ${e.message}`;
}

const answer = (text: string | Buffer) => (_id: string, ch: ServerChannel) => void ch.write(text);

describe('NETCONF driver against a hostile device', () => {
  const connectBound = LIMITS.connectTimeoutMs + 1000;
  const commandBound = LIMITS.connectTimeoutMs + LIMITS.commandTimeoutMs + 1000;

  it('a missing, binary, malformed or baseless hello fails open() saying so', async () => {
    expect(await failure({ hello: null }, connectBound)).toMatch(/^timeout: no NETCONF <hello> from .* within 2000ms/);
    expect(await failure({ hello: '\x00\x01\x02\xff garbage' }, connectBound)).toMatch(/^protocol: .*expected an XML message/);
    expect(await failure({ hello: `<hello><capabilities></hello>${EOM}` }, connectBound)).toMatch(/^protocol: .*not well-formed XML/);
    expect(await failure({ hello: hello('urn:x') }, connectBound)).toMatch(/^protocol: .*advertises neither base:1.0 nor base:1.1/);
  });

  it('bad chunk headers, a 2^31 chunk and chunks beyond the size bound fail the rpc at once', async () => {
    const h = hello(CAP.base10, CAP.base11);
    for (const [bad, why] of [
      ['\n#99999999999\n', /chunk size too long/],
      ['\n#0\n', /expected chunk size \(1-9\)/],
      ['\n#1a\n', /expected digit or LF in chunk size/],
      ['\n#2147483648\n', /message exceeds 33554432 bytes/],
    ] as const) {
      expect(await failure({ hello: h, onRpc: answer(bad) }, commandBound)).toMatch(new RegExp(`^protocol: .*bad chunked framing: ${why.source}`));
    }
    const endless = (_id: string, ch: ServerChannel) => {
      const chunk = `\n#65536\n${'x'.repeat(65536)}`;
      const more = () => ch.writable && ch.write(chunk) && setImmediate(more);
      more();
    };
    const small = createNetconfDriver({ maxMessageBytes: 1024 * 1024 });
    expect(await failure({ hello: h, onRpc: endless }, commandBound, small)).toMatch(/^protocol: .*message exceeds 1048576 bytes/);
  });

  it('invalid XML, ]]>]]> inside data, a wrong message-id, a reply cut off: errors, never a hang', async () => {
    const base11 = hello(CAP.base10, CAP.base11);
    const base10 = hello(CAP.base10);
    const data = (id: string) => reply(id, '<data><x>a]]>]]>b</x></data>');
    expect(await failure({ hello: base11, onRpc: answer(chunked('<rpc-reply><data>')) }, commandBound)).toMatch(/^protocol: .*not well-formed XML/);
    expect(await failure({ hello: base10, onRpc: (id, ch) => void ch.write(data(id) + EOM) }, commandBound)).toMatch(
      /^protocol: .*not well-formed XML/,
    );
    expect(await failure({ hello: base11, onRpc: (_id, ch) => void ch.write(chunked(reply('999', '<data/>'))) }, commandBound)).toMatch(
      /^timeout: get-config running .* timed out after 1000ms without a reply/,
    );
    expect(await failure({ hello: base11, onRpc: (id, ch) => ch.end(chunked(reply(id, '<data><x>')).slice(0, 30)) }, commandBound)).toMatch(
      /^protocol: .*closed the NETCONF session/,
    );
    const endlessEom = (_id: string, ch: ServerChannel) => {
      ch.write('<rpc-reply>');
      const more = () => ch.writable && ch.write('x'.repeat(65536)) && setImmediate(more);
      more();
    };
    const small = createNetconfDriver({ maxMessageBytes: 1024 * 1024 });
    expect(await failure({ hello: base10, onRpc: endlessEom }, commandBound, small)).toMatch(
      /^protocol: .*message exceeds 1048576 bytes without an end-of-message marker/,
    );
  });

  it('decodes a message however the device splits its bytes: 48 MiB in 32 KiB reads, 2 million 1-byte chunks', () => {
    // 48 MiB end-of-message text in 32 KiB reads: concatenating on every read took about 15 s (a
    // slow test, not a failure: how fast is the benchmarks' business, this checks what comes out).
    const eom = new FrameDecoder('eom', 64 * 1024 * 1024);
    const piece = Buffer.alloc(32 * 1024, 0x61);
    eom.push(Buffer.from('<x>'));
    for (let i = 0; i < 1536; i++) expect(eom.pushAll(piece)).toEqual([]);
    expect(eom.pushAll(Buffer.from(`</x>${EOM}`))[0]).toHaveLength(48 * 1024 * 1024 + 7);
    // 2 million 1-byte chunks (10 MB on the wire): a view per chunk held about 200 MiB of heap.
    const tiny = new FrameDecoder('chunked');
    const reads = Buffer.from('\n#1\nx'.repeat(20_000));
    for (let i = 0; i < 100; i++) expect(tiny.pushAll(reads)).toEqual([]);
    expect(tiny.pushAll(Buffer.from('\n##\n'))[0]).toHaveLength(2_000_000);
    // Only blanks, in 2 KiB reads, then a message: blanks are scanned once (rescanned from the start
    // on every read, 32 MiB of them blocked the agent for minutes).
    const blanks = new FrameDecoder('eom');
    const spaces = Buffer.alloc(2048, 0x20);
    for (let i = 0; i < 4096; i++) expect(blanks.pushAll(spaces)).toEqual([]);
    expect(blanks.pushAll(Buffer.from(`<ok/>${EOM}`))[0]).toMatch(/<ok\/>$/);
  });
});
