/**
 * A gNMI "device" that sends garbage: malformed JSON, updates that contradict each other,
 * member names that are JavaScript internals, errors, answers that never come, an answer larger
 * than the size bound, bytes that are not gRPC at all. Every operation must fail with a
 * DriverError saying what was wrong, within its limit, without an uncaught exception.
 */
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createGnmiDriver, gnmiDriver, gnmiService, type GnmiSession } from '../../agent/src/drivers/gnmi';
import type { ProtoTypedValue, ProtoUpdate } from '../../agent/src/drivers/gnmi/driver';
import { driverFailure, expectNothingUncaught, expectSettledWithin, loopbackTarget } from './fixtures/netconf/testkit';

const LIMITS = { connectTimeoutMs: 2000, commandTimeoutMs: 1000, idleTimeoutMs: 1000, keepaliveIntervalMs: 5000 };

type Respond = (call: grpc.ServerUnaryCall<unknown, unknown>, cb: grpc.sendUnaryData<unknown>) => void;

/** What the hostile target answers to the next Get. */
let onGet: Respond = (_call, cb) => cb(null, { notification: [] });
let server: grpc.Server;
let port: number;

const capabilities = { supported_models: [], supported_encodings: ['JSON_IETF'], gNMI_version: '0.10.0' };
const update = (elems: string[], val: ProtoTypedValue): ProtoUpdate => ({
  path: { elem: elems.map((name) => ({ name, key: {} })) },
  val,
});
const json = (v: string | Buffer): ProtoTypedValue => ({ json_ietf_val: Buffer.from(v) });
const getAnswer = (...updates: ProtoUpdate[]): Respond => {
  return (_call, cb) => cb(null, { notification: [{ timestamp: '1', update: updates, delete: [] }] });
};

expectNothingUncaught();

beforeAll(async () => {
  server = new grpc.Server({ 'grpc.max_send_message_length': -1 });
  server.addService(gnmiService().service, {
    Capabilities: (_call: unknown, cb: grpc.sendUnaryData<unknown>) => cb(null, capabilities),
    Get: (call: grpc.ServerUnaryCall<unknown, unknown>, cb: grpc.sendUnaryData<unknown>) => onGet(call, cb),
    Set: (_call: unknown, cb: grpc.sendUnaryData<unknown>) => cb({ code: grpc.status.INTERNAL, details: 'half applied?' }),
  } as unknown as grpc.UntypedServiceImplementation);
  port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
});

afterAll(() => {
  server.forceShutdown();
});

const sessions: GnmiSession[] = [];
afterEach(async () => {
  await Promise.all(sessions.splice(0).map((s) => s.close()));
});

async function open(driver = gnmiDriver, p = port): Promise<GnmiSession> {
  const s = await driver.open(loopbackTarget({ gnmi: p }), LIMITS);
  sessions.push(s);
  return s;
}

/** fetchConfig's DriverError, and how long it took. */
async function fetchFails(s: GnmiSession): Promise<{ message: string; kind: string; ms: number }> {
  const t = Date.now();
  const e = await driverFailure(s.fetchConfig());
  return { message: e.message, kind: e.kind, ms: Date.now() - t };
}

describe('gNMI driver against a hostile target', () => {
  it('malformed or contradictory answers → protocol errors naming the problem', async () => {
    const s = await open();
    onGet = getAnswer(update([], json('{"interfaces": {"interface": [')));
    expect(await fetchFails(s)).toMatchObject({ kind: 'protocol', message: expect.stringMatching(/not valid JSON/) });
    // A leaf at /a, then a container below it: the updates do not form one tree.
    onGet = getAnswer(update(['a'], json('5')), update(['a', 'b'], json('{}')));
    expect(await fetchFails(s)).toMatchObject({ kind: 'protocol', message: expect.stringMatching(/\/a is not a container/) });
    onGet = getAnswer(update(['constructor', 'x'], json('1')));
    expect(JSON.parse((await s.fetchConfig()).text)).toEqual({ constructor: { x: 1 } });
  });

  it('member names like __proto__ are data: nothing reaches Object.prototype', async () => {
    const s = await open();
    onGet = getAnswer(update(['__proto__', 'polluted'], json('"yes"')), update(['b'], json('{"__proto__": {"toString": 1}}')));
    const cfg = JSON.parse((await s.fetchConfig()).text) as Record<string, unknown>;
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.hasOwn(cfg, '__proto__')).toBe(true);
    expect(JSON.stringify(cfg)).toBe('{"__proto__":{"polluted":"yes"},"b":{"__proto__":{"toString":1}}}');
  });

  it('an error status, an answer that never comes → device error, timeout within the command limit', async () => {
    const s = await open();
    onGet = (_call, cb) => cb({ code: grpc.status.INTERNAL, details: 'boom\nmid-answer' });
    expect(await fetchFails(s)).toMatchObject({ kind: 'device', message: expect.stringMatching(/INTERNAL: boom mid-answer/) });
    onGet = () => undefined;
    const t = await fetchFails(s);
    expect(t).toMatchObject({ kind: 'timeout', message: expect.stringMatching(/timed out after 1000ms/) });
    expect(t.ms).toBeLessThan(LIMITS.commandTimeoutMs + 10_000); // a hang, not a busy machine
    const e = await driverFailure(s.apply([{ operation: 'merge', target_path: '/a', config_format: 'json', config: '{}' }]));
    expect(e.message).toMatch(/INTERNAL: half applied\?/);
  });

  it('an answer over the size bound is refused; the transcript of a large one stays small', async () => {
    const driver = createGnmiDriver({ maxMessageBytes: 1024 * 1024 });
    const s = await open(driver);
    onGet = getAnswer(update([], { bytes_val: Buffer.alloc(2 * 1024 * 1024, 1) }));
    expect(await fetchFails(s)).toMatchObject({ kind: 'device', message: expect.stringMatching(/RESOURCE_EXHAUSTED/) });
    // Under the bound: the transcript shows the start of each value, not a JSON array of its bytes.
    const lines: string[] = [];
    const t = await driver.open(loopbackTarget({ gnmi: port }), LIMITS, { write: (_d, text) => lines.push(text) });
    sessions.push(t);
    onGet = getAnswer(update([], { bytes_val: Buffer.alloc(900 * 1024, 1) }));
    await t.fetchConfig();
    expect(lines.reduce((n, l) => n + l.length, 0)).toBeLessThan(512 * 1024);
    expect(lines.join('')).toContain('… (921600 bytes)');
  });

  it('bytes that are not gRPC, or a message that never ends → protocol or timeout, never a hang', async () => {
    for (const answer of ['garbage', 'endless'] as const) {
      const raw = http2.createServer();
      raw.on('stream', (stream, headers) => {
        stream.on('error', () => undefined);
        if (String(headers[':path']).endsWith('/Capabilities')) {
          stream.respond({ ':status': 200, 'content-type': 'application/grpc' });
          if (answer === 'garbage') stream.end(Buffer.from([0, 0, 0, 0, 5, 0xff, 0xff, 0xff, 0xff, 0xff]));
          else stream.write(Buffer.from([0, 0x00, 0x10, 0, 0, 1, 2, 3])); // 1 MiB announced, 3 bytes sent
        }
      });
      await new Promise<void>((r) => raw.listen(0, '127.0.0.1', r));
      const t = Date.now();
      const e = await driverFailure(gnmiDriver.open(loopbackTarget({ gnmi: (raw.address() as AddressInfo).port }), LIMITS));
      expectSettledWithin(t, LIMITS.connectTimeoutMs);
      expect(e.message).toMatch(answer === 'garbage' ? /Capabilities \(connect\) on .* failed: [A-Z_]+: / : /timed out after 2000ms/);
      await new Promise((r) => raw.close(r));
    }
  });
});
