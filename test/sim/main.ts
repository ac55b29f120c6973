/**
 * `npm run sim`: simulated devices on loopback until Ctrl-C. With no --kind, every transport we
 * support (an SSH CLI device per dialect, a NETCONF device, a gNMI target) on one port per
 * transport; `--kind ssh` a fleet of SSH CLI devices. Prints a table of devices (or CSV for
 * POST /api/devices/import/csv) and serves the admin port that changes a device's configuration
 * from outside (test/sim/admin.ts). Each simulator kind registers itself with one line in KINDS.
 */
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { startSimAdmin } from './admin';

export interface SimStartOptions {
  devices: number;
  /** device_types to cycle over. */
  deviceTypes: string[];
  basePort?: number;
  /** One loopback address per device, all on the same port. */
  spreadHosts: boolean;
  host: string;
  namePrefix: string;
  username: string;
  password: string;
  enablePassword?: string;
  /** The lab kind: a port per transport, and the index of the first loopback address. */
  ports?: Partial<Record<SimTransport, number>>;
  firstAddress?: number;
}

export type SimTransport = 'ssh' | 'netconf' | 'gnmi';

export interface SimDevice {
  name: string;
  host: string;
  port: number;
  device_type: string;
  transport: SimTransport;
  /** The running configuration as a backup should read it. */
  config(): string;
  /** Replace the running configuration; throws with a reason when the text does not fit the transport. */
  setConfig(text: string): void;
}

export interface SimKind {
  description: string;
  deviceTypes: string[];
  defaultDeviceType: string;
  start(o: SimStartOptions): Promise<{ devices: SimDevice[]; close(): Promise<void> }>;
}

/** Loaded lazily so one kind's dependencies never slow down another. */
const KINDS: Record<string, () => Promise<SimKind>> = {
  lab: async () => (await import('./lab/kind')).labSimKind,
  ssh: async () => (await import('./ssh/kind')).sshSimKind,
};

const USAGE = `usage: npm run sim -- [--kind ${Object.keys(KINDS).join('|')}] [--devices N] [--dialect TYPE[,TYPE...]]
       [--username admin] [--password admin] [--enable-password SECRET] [--csv] [--admin-port PORT (lab: 10080)]
  lab (default): an SSH CLI device per dialect, a NETCONF device and a gNMI target (N of each), one
       loopback address per device, [--ssh-port 10022] [--netconf-port 10830] [--gnmi-port 19339]
       [--first-address K] (the K-th loopback address first, 0 = 127.0.0.1)
  ssh: N SSH CLI devices, [--base-port PORT] [--spread-hosts] [--host 127.0.0.1] [--name-prefix sim]
(use 'npm run -s sim -- ...' or 'npx tsx test/sim/main.ts ...' to get CSV without npm's banner)`;

function fail(msg: string): never {
  console.error(`sim: ${msg}\n${USAGE}`);
  process.exit(2);
}

function csvField(v: string): string {
  return /[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

function portOption(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`--${flag} must be a whole number from 0 to 65535`);
  return port;
}

/** Columns padded to their widest cell, so the table reads in a terminal and splits on spaces in scripts. */
export function formatTable(rows: string[][]): string {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  return rows
    .map((r) =>
      r
        .map((cell, c) => cell.padEnd(widths[c]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function printDevices(rows: SimDevice[], login: string, csv: boolean, kind: string): void {
  if (csv) {
    console.log('name,host,device_type,manufacturer,model,platform,site,description');
    for (const d of rows) {
      console.log(
        [d.name, d.host, d.device_type, 'simulator', d.device_type, 'sim', 'lab', `simulated; ${kind === 'lab' ? d.transport : kind} port ${d.port}`]
          .map(csvField)
          .join(','),
      );
    }
    return;
  }
  const table = [
    ['NAME', 'ADDRESS', 'PORT', 'TRANSPORT', 'DIALECT', 'LOGIN'],
    ...rows.map((d) => [d.name, d.host, String(d.port), d.transport, d.device_type, login]),
  ];
  console.log(formatTable(table));
}

function portNote(rows: SimDevice[]): string {
  const ports = new Set(rows.map((d) => `${d.transport} ${d.port}`));
  if (ports.size <= 3 && new Set(rows.map((d) => d.transport)).size === ports.size) {
    return `one port per transport (${[...ports].join(', ')}): one connection profile with these ports reaches every device`;
  }
  const numbers = rows.map((d) => d.port);
  return (
    `devices listen on different ports (${Math.min(...numbers)}-${Math.max(...numbers)}); CSV import has no port column, so ` +
    `use --spread-hosts (one loopback address per device, one port) to import them with a single connection profile`
  );
}

export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      devices: { type: 'string', default: '1' },
      kind: { type: 'string', default: 'lab' },
      dialect: { type: 'string' },
      'base-port': { type: 'string' },
      'spread-hosts': { type: 'boolean', default: false },
      host: { type: 'string', default: '127.0.0.1' },
      'name-prefix': { type: 'string', default: 'sim' },
      username: { type: 'string', default: 'admin' },
      password: { type: 'string', default: 'admin' },
      'enable-password': { type: 'string' },
      'ssh-port': { type: 'string' },
      'netconf-port': { type: 'string' },
      'gnmi-port': { type: 'string' },
      'first-address': { type: 'string' },
      'admin-port': { type: 'string' },
      csv: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const load = KINDS[values.kind];
  if (!load) fail(`unknown --kind '${values.kind}' (known: ${Object.keys(KINDS).join(', ')})`);
  const kind = await load();
  const devices = Number(values.devices);
  if (!Number.isInteger(devices) || devices < 1 || devices > 20000) fail('--devices must be a whole number from 1 to 20000');
  const basePort = portOption(values['base-port'], 'base-port');
  if (basePort !== undefined && !values['spread-hosts'] && basePort + devices - 1 > 65535) fail('--base-port + --devices exceeds port 65535');
  const firstAddress = values['first-address'] === undefined ? undefined : Number(values['first-address']);
  if (firstAddress !== undefined && (!Number.isInteger(firstAddress) || firstAddress < 0 || firstAddress > 60000))
    fail('--first-address must be a whole number from 0 to 60000');
  const adminPort = portOption(values['admin-port'] ?? (values.kind === 'lab' ? '10080' : undefined), 'admin-port');
  const deviceTypes = (values.dialect ?? kind.defaultDeviceType)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = deviceTypes.filter((t) => !kind.deviceTypes.includes(t));
  if (unknown.length) fail(`unknown --dialect ${unknown.join(', ')} (known: ${kind.deviceTypes.join(', ')})`);

  const started = Date.now();
  const sim = await kind.start({
    devices,
    deviceTypes,
    basePort: values['spread-hosts'] ? (basePort ?? 10022) : basePort,
    spreadHosts: values['spread-hosts'],
    host: values.host,
    namePrefix: values['name-prefix'],
    username: values.username,
    password: values.password,
    enablePassword: values['enable-password'],
    ports: {
      ssh: portOption(values['ssh-port'], 'ssh-port'),
      netconf: portOption(values['netconf-port'], 'netconf-port'),
      gnmi: portOption(values['gnmi-port'], 'gnmi-port'),
    },
    firstAddress,
  });
  const admin =
    adminPort === undefined
      ? undefined
      : await startSimAdmin(sim.devices, '127.0.0.1', adminPort).catch(async (e: Error) => {
          await sim.close();
          fail(`admin port ${adminPort}: ${e.message} (choose another with --admin-port)`);
        });
  const login = `${values.username}/${values.password}${values['enable-password'] ? `, enable ${values['enable-password']}` : ''}`;
  printDevices(sim.devices, login, values.csv, values.kind);
  console.error(
    `sim: ${sim.devices.length} ${values.kind} device(s) up in ${Date.now() - started} ms; login ${login}. Note: ${portNote(sim.devices)}.\n` +
      (admin
        ? `sim: admin port http://127.0.0.1:${admin.port}: GET /devices; GET or PUT /devices/NAME/config reads or replaces a device's configuration.\n`
        : '') +
      'sim: Ctrl-C to stop.',
  );
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  admin?.server.close();
  await sim.close();
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main(process.argv.slice(2)).then(
    () => process.exit(0),
    (e: Error) => {
      console.error(`sim: ${e.message}`);
      process.exit(1);
    },
  );
}
