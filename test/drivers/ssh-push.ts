/**
 * What the push tests of one SSH dialect share: simulated devices closed after the file, a
 * session per step, a cli change, and the one-place edit a person would make to the expected config.
 */
import { afterAll, expect } from 'vitest';
import { sshCliDriver, type SshCliSessionApi } from '../../agent/src/drivers/ssh';
import type { ConfigChange, DeviceCredentials } from '../../agent/src/drivers/types';
import { sshTarget, startSshDevice, type SimSshDevice, type SshDeviceOptions } from '../sim/ssh';

const CREDS = { username: 'admin', password: 'sim-pass' };

/** Devices of `dialect` (small configs) for one test file, and sessions to them that always close. */
export function pushHarness(dialect: string) {
  const started: SimSshDevice[] = [];
  afterAll(async () => {
    await Promise.all(started.map((d) => d.close()));
  });
  return {
    /** `more`: other options of the simulated device (more accounts, say). */
    async device(hostname: string, more: SshDeviceOptions = {}): Promise<SimSshDevice> {
      const dev = await startSshDevice({ dialect, hostname, ...CREDS, configScale: 3, ...more });
      started.push(dev);
      return dev;
    },
    /** A session as the harness's account, or as `as` (another account of the device). */
    async session<T>(dev: SimSshDevice, fn: (s: SshCliSessionApi) => Promise<T>, as: DeviceCredentials = CREDS): Promise<T> {
      const s = await sshCliDriver.open(sshTarget(dev, as));
      try {
        return await fn(s);
      } finally {
        await s.close();
      }
    },
  };
}

/** A cli change of these lines. */
export const cli = (...lines: string[]): ConfigChange => ({ config: lines.join('\n'), config_format: 'cli', operation: 'merge', target_path: null });

/** The one match of `re` in `text` replaced (the edit a person would make by hand). */
export function edit(text: string, re: RegExp, to: string): string {
  expect(text.match(new RegExp(re.source, re.flags + 'g'))?.length, `exactly one ${re} in the config`).toBe(1);
  return text.replace(re, to);
}
