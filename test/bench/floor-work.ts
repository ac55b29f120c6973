/**
 * One device's work in the floors, the same code wherever a floor runs it (in the benchmark
 * process, or in the pipeline floor's agent processes): open a session with the driver, do the
 * benchmark's job, close. Answers what an agent would send back for the device.
 */
import { pollOverCli } from '../../agent/src/discovery/ssh-poll';
import { gnmiDriver } from '../../agent/src/drivers/gnmi';
import { sshCliDriver } from '../../agent/src/drivers/ssh';
import type { ConfigChange, DeviceSession, DeviceTarget, FetchedConfig } from '../../agent/src/drivers/types';
import { configPlaceholder } from '../../shared/src/jobs/transcript';

export interface FloorOutcome {
  ok: boolean;
  /** What an agent would send back for the device. */
  result: unknown;
  /** Discovery records found (poll only). */
  records?: number;
}

/** Where the deploy benchmark's two services go. */
export const DEPLOY_PATHS = { system: '/system/config', interfaces: '/interfaces' } as const;

/** The deploy benchmark's two services as rendered for `target`. */
export function deployChanges(target: DeviceTarget): ConfigChange[] {
  return [
    {
      target_path: DEPLOY_PATHS.system,
      operation: 'replace',
      config_format: 'json',
      config: JSON.stringify({ hostname: target.name, 'domain-name': 'dc1.example.net' }),
    },
    {
      target_path: DEPLOY_PATHS.interfaces,
      operation: 'replace',
      config_format: 'json',
      config: JSON.stringify({ interface: [1, 2, 3, 4].map((p) => ({ name: `Ethernet${p}`, config: { mtu: 9214, description: `uplink ${p}` } })) }),
    },
  ];
}

/** What the pipeline floor adds to a device's work: deploy's backup stored before the change (the driver floor has none). */
export interface FloorHooks {
  beforeChange?(backup: FetchedConfig): Promise<unknown>;
}

interface FloorWork<S extends DeviceSession> {
  open(target: DeviceTarget): Promise<S>;
  run(session: S, target: DeviceTarget, hooks?: FloorHooks): Promise<FloorOutcome>;
}
const work = <S extends DeviceSession>(w: FloorWork<S>) => w as unknown as FloorWork<DeviceSession>;

/** The work of each floor, by benchmark. */
export const FLOOR_WORK = {
  /** The running config over SSH, and a transcript with its placeholder, as a backup job answers. */
  backup: work({
    open: (target) => sshCliDriver.open(target),
    async run(session) {
      const config = await session.fetchConfig();
      return { ok: true, result: { results: [{ method: 'cli', config }], transcript: configPlaceholder('cli') } };
    },
  }),
  /** The dialect's show commands over SSH, parsed, as a poll job answers. */
  poll: work({
    open: (target) => sshCliDriver.open(target),
    async run(session, target) {
      const r = await pollOverCli(session, target.device_type);
      const records = Object.values(r.records).reduce((n, list) => n + list.length, 0);
      return { ok: !r.sections.some((s) => s.status === 'failed'), result: r, records };
    },
  }),
  /** Over gNMI: backup (stored through hooks.beforeChange in the pipeline floor), both services in one SetRequest, verify; answers the backup. */
  deploy: work({
    open: (target) => gnmiDriver.open(target),
    async run(session, target, hooks) {
      const backup = await session.fetchConfig();
      await hooks?.beforeChange?.(backup);
      await session.apply!(deployChanges(target));
      await session.fetchConfig();
      return { ok: true, result: { status: 'succeeded', backup } };
    },
  }),
};

export type FloorWorkName = keyof typeof FLOOR_WORK;
