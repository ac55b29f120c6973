/**
 * SCP upload (the sink side runs `scp -t <file>` on the device) over an open ssh2 connection:
 * how a backup reaches the device's flash before `configure replace`. Network OSes that serve
 * SCP (IOS `ip scp server enable`, NX-OS, EOS) speak this protocol; SFTP is rarer on them.
 */
import type { Client as SshClient, ClientChannel } from 'ssh2';
import { DriverError } from '../types';

const MAX_ERROR_LINE = 4096;

/** Copies `text` to `file` on the device; fails with the device's own words when it refuses. */
export function scpUpload(client: SshClient, file: string, text: string, where: string, timeoutMs: number): Promise<void> {
  const data = Buffer.from(text, 'utf8');
  const name = file.replace(/^.*[:/]/, '') || 'switchboard.cfg';
  return new Promise<void>((resolve, reject) => {
    let channel: ClientChannel | undefined;
    let settled = false;
    const finish = (err?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      channel?.removeAllListeners('data');
      if (err) channel?.close();
      if (err) reject(err);
      else resolve();
    };
    const timer = setTimeout(
      () => finish(new DriverError('timeout', `${where}: SCP upload of ${file} timed out (command timeout ${timeoutMs} ms)`)),
      timeoutMs,
    );
    client.exec(`scp -t ${file}`, (err, ch) => {
      if (err)
        return finish(new DriverError('device', `${where}: the device refused SCP (${err.message}); enable its SCP server to restore over SSH`));
      channel = ch;
      // Each step waits for one acknowledgement byte: 0 = fine, 1/2 + a line = the device's error.
      const steps: Array<() => void> = [
        () => ch.write(`C0644 ${data.length} ${name}\n`),
        () => {
          ch.write(data);
          ch.write(Buffer.from([0]));
        },
        () => {
          ch.end();
          finish();
        },
      ];
      let pending = Buffer.alloc(0);
      ch.on('data', (chunk: Buffer) => {
        pending = Buffer.concat([pending, chunk]);
        while (pending.length > 0 && !settled) {
          if (pending[0] === 0) {
            pending = pending.subarray(1);
            steps.shift()?.();
            continue;
          }
          // The device's error line: a device that never ends it is cut off rather than buffered for ever.
          const nl = pending.indexOf(0x0a);
          if (nl < 0 && pending.length < MAX_ERROR_LINE) return;
          const said = pending
            .subarray(1, nl < 0 ? MAX_ERROR_LINE : nl)
            .toString('utf8')
            .trim();
          return finish(new DriverError('device', `${where}: SCP upload of ${file} refused: ${said || 'no reason given'}`));
        }
      });
      ch.stderr.on('data', () => undefined);
      ch.on('close', () => finish(new DriverError('device', `${where}: SCP upload of ${file} ended before the device confirmed it`)));
    });
  });
}
