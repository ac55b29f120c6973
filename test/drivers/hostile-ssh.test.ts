/**
 * An SSH CLI "device" that sends garbage: binary noise, an escape-sequence storm and no prompt,
 * silence, a line that never ends, a 50 MB line, a pager that never ends, a shell that closes
 * mid-command. Opening and fetching must fail with a DriverError saying what was wrong, within
 * the limits, with output bounded and without an uncaught exception.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import ssh2, { type ServerChannel } from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSshCliDriver, sshCliDriver, type SshCliDriver } from '../../agent/src/drivers/ssh';
import { readableKeyPair } from '../sim/ssh/device';
import { driverFailure, expectNothingUncaught, fetchFailure, loopbackTarget } from './fixtures/netconf/testkit';

const LIMITS = { connectTimeoutMs: 2000, commandTimeoutMs: 1500, idleTimeoutMs: 1000, keepaliveIntervalMs: 5000 };
const PROMPT = '\r\nR1#';

/** How the device's shell behaves: what it sends at once, and its answer to show running-config. */
interface Script {
  start(ch: ServerChannel): void;
  showConfig?(ch: ServerChannel): void;
}

let script: Script = { start: () => undefined };
let server: ssh2.Server;
let port: number;

/** Writes `piece` until the channel closes (or `left` pieces were sent), yielding to I/O in between. */
function flood(ch: ServerChannel, piece: () => string | Buffer, left = Infinity): void {
  const more = () => {
    while (ch.writable && left-- > 0) if (!ch.write(piece())) return void ch.once('drain', more);
  };
  more();
}

function serve(ch: ServerChannel): void {
  const s = script;
  ch.on('error', () => undefined);
  s.start(ch);
  let line = '';
  ch.on('data', (d: Buffer) => {
    line += d.toString('latin1');
    for (let nl = line.indexOf('\n'); nl >= 0; nl = line.indexOf('\n')) {
      const cmd = line.slice(0, nl).trim();
      line = line.slice(nl + 1);
      ch.write(`${cmd}\r\n`);
      if (cmd === 'show running-config' && s.showConfig) s.showConfig(ch);
      else ch.write(PROMPT);
    }
  });
}

beforeAll(async () => {
  server = new ssh2.Server({ hostKeys: [readableKeyPair().private] }, (conn) => {
    conn.on('error', () => undefined);
    conn.on('authentication', (ctx) => (ctx.method === 'password' ? ctx.accept() : ctx.reject(['password'])));
    conn.on('ready', () =>
      conn.on('session', (accept) => {
        const session = accept();
        session.on('pty', (ok) => ok?.());
        session.on('shell', (ok) => serve(ok()));
        // An SCP sink that refuses with an error line that never ends.
        session.on('exec', (ok) => flood(ok(), () => '\x01scp: no '.padEnd(16384, 'z')));
      }),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
});

expectNothingUncaught();

/** "kind: message" of open() + fetchConfig() (+ close) against `s`, checked to come within `withinMs`. */
async function failure(s: Script, withinMs: number, driver: SshCliDriver = sshCliDriver, limits = LIMITS): Promise<string> {
  script = s;
  const e = await fetchFailure(driver.open(loopbackTarget({ ssh: port }), limits), withinMs);
  return `${e.kind}: ${e.message}`;
}

const prompt = (ch: ServerChannel) => void ch.write(PROMPT);

describe('SSH CLI driver against a hostile device', () => {
  const connectBound = LIMITS.connectTimeoutMs + 1000;
  const commandBound = LIMITS.connectTimeoutMs + LIMITS.commandTimeoutMs + 1000;

  const small = createSshCliDriver({ maxOutputBytes: 1024 * 1024, closeGraceMs: 200 });

  it('binary noise, an escape storm without a prompt, silence: open() fails saying which', async () => {
    expect(await failure({ start: (ch) => flood(ch, () => randomBytes(1024), 64) }, connectBound)).toMatch(
      /^protocol: .*binary data, not CLI text .*while waiting for the first prompt/,
    );
    const storm = () => '\x1b[2J\x1b[1;1H\x1b]0;R1#\x07\x1b[K\r\x1b[?25l'.repeat(64);
    expect(await failure({ start: (ch) => flood(ch, storm) }, connectBound, small)).toMatch(
      /^protocol: .*output exceeded the 1 MiB limit while waiting for the first prompt/,
    );
    expect(await failure({ start: () => undefined }, connectBound)).toMatch(
      /^timeout: .*device silent for 1000 ms while waiting for the first prompt \(idle timeout; nothing received\)/,
    );
  });

  it('a line that never ends, a pager that never ends, a shell that closes mid-command', async () => {
    const endless = { start: prompt, showConfig: (ch: ServerChannel) => flood(ch, () => 'x'.repeat(16384)) };
    expect(await failure(endless, commandBound, small)).toMatch(
      /^protocol: .*output exceeded the 1 MiB limit while waiting for the output of 'show running-config'/,
    );
    const pages = {
      start: (ch: ServerChannel) => {
        prompt(ch);
        ch.on('data', (d: Buffer) => d.toString() === ' ' && ch.write(`\r\x1b[K${'interface x\r\n'.repeat(300)} --More-- `));
      },
      showConfig: (ch: ServerChannel) => void ch.write('hostname R1\r\n --More-- '),
    };
    expect(await failure(pages, commandBound, small)).toMatch(
      /^protocol: .*output exceeded the 1 MiB limit while waiting for the output of 'show running-config'/,
    );
    const closes = { start: prompt, showConfig: (ch: ServerChannel) => ch.end('hostname R1\r\ninterf') };
    expect(await failure(closes, commandBound, small)).toMatch(
      /^protocol: .*connection closed by the device while waiting for the output of 'show running-config'/,
    );
  });

  it('an SCP refusal whose line never ends is cut off, not buffered until the timeout', async () => {
    script = { start: prompt };
    const s = await small.open(loopbackTarget({ ssh: port }), LIMITS);
    const e = await driverFailure(s.restore({ text: 'hostname R1\n', format: 'cli', via: 'ssh' }));
    await s.close();
    // Buffered until the command timeout, it failed as a timeout: the refusal's own text says it was cut off at once.
    expect(e.message).toMatch(/SCP upload of flash:switchboard-restore.cfg refused: scp: no z+$/);
  });

  it('a 50 MB line stops at the default 32 MiB bound', async () => {
    let sent = 0;
    const huge = {
      start: prompt,
      showConfig: (ch: ServerChannel) => flood(ch, () => ((sent += 1 << 20), 'y'.repeat(1 << 20)), 50),
    };
    // The bound, not the command timeout, must stop it: 32 MiB can take longer than 1.5 s on a busy machine.
    const patient = { ...LIMITS, commandTimeoutMs: 20_000 };
    expect(await failure(huge, 25_000, sshCliDriver, patient)).toMatch(/^protocol: .*output exceeded the 32 MiB limit/);
    expect(sent).toBeLessThanOrEqual(50 << 20);
  }, 30_000);
});
