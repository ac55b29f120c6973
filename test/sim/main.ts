/**
 * `npm run sim -- --devices N [--kind ssh] [--dialect vendor_ios[,vendor_junos,...]]
 *   [--base-port 10022] [--spread-hosts] [--username admin --password admin]
 *   [--enable-password secret] [--csv]`
 *
 * Starts simulated devices on loopback, prints one line per device (or CSV for
 * POST /api/devices/import/csv) and stays up until Ctrl-C. Each simulator kind registers
 * itself with one line in KINDS below.
 */
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';

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
}

export interface SimDeviceRow {
  name: string;
  host: string;
  port: number;
  device_type: string;
}

export interface SimKind {
  description: string;
  deviceTypes: string[];
  defaultDeviceType: string;
  start(o: SimStartOptions): Promise<{ devices: SimDeviceRow[]; close(): Promise<void> }>;
}

/** Loaded lazily so one kind's dependencies never slow down another. */
const KINDS: Record<string, () => Promise<SimKind>> = {
  ssh: async () => (await import('./ssh/kind')).sshSimKind,
};

const USAGE = `usage: npm run sim -- --devices N [--kind ${Object.keys(KINDS).join('|')}] [--dialect TYPE[,TYPE...]]
       [--base-port PORT] [--spread-hosts] [--host 127.0.0.1] [--name-prefix sim]
       [--username admin] [--password admin] [--enable-password SECRET] [--csv]
(use 'npm run -s sim -- ...' or 'npx tsx test/sim/main.ts ...' to get CSV without npm's banner)`;

function fail(msg: string): never {
  console.error(`sim: ${msg}\n${USAGE}`);
  process.exit(2);
}

function csvField(v: string): string {
  return /[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      devices: { type: 'string', default: '1' },
      kind: { type: 'string', default: 'ssh' },
      dialect: { type: 'string' },
      'base-port': { type: 'string' },
      'spread-hosts': { type: 'boolean', default: false },
      host: { type: 'string', default: '127.0.0.1' },
      'name-prefix': { type: 'string', default: 'sim' },
      username: { type: 'string', default: 'admin' },
      password: { type: 'string', default: 'admin' },
      'enable-password': { type: 'string' },
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
  const basePort = values['base-port'] === undefined ? undefined : Number(values['base-port']);
  if (basePort !== undefined && (!Number.isInteger(basePort) || basePort < 1 || basePort > 65535)) fail('--base-port must be 1-65535');
  if (basePort !== undefined && !values['spread-hosts'] && basePort + devices - 1 > 65535) fail('--base-port + --devices exceeds port 65535');
  const deviceTypes = (values.dialect ?? kind.defaultDeviceType).split(',').map((s) => s.trim()).filter(Boolean);
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
  });
  const rows = sim.devices;
  if (values.csv) {
    console.log('name,host,device_type,manufacturer,model,platform,site,description');
    for (const d of rows) {
      console.log([d.name, d.host, d.device_type, 'simulator', d.device_type, 'sim', 'lab', `simulated; ${values.kind} port ${d.port}`].map(csvField).join(','));
    }
  } else {
    for (const d of rows) console.log(`${d.name}\t${d.host}\t${d.port}\t${d.device_type}`);
  }
  const ports = new Set(rows.map((d) => d.port));
  const note =
    ports.size === 1
      ? `all devices listen on port ${rows[0].port}: set that port in the connection profile`
      : `devices listen on different ports (${Math.min(...ports)}-${Math.max(...ports)}); CSV import has no port column, so ` +
        `use --spread-hosts (one loopback address per device, one port) to import them with a single connection profile`;
  console.error(
    `sim: ${rows.length} ${values.kind} device(s) up in ${Date.now() - started} ms; login ${values.username}/${values.password}` +
      `${values['enable-password'] ? `, enable ${values['enable-password']}` : ''}. Note: ${note}. Ctrl-C to stop.`,
  );
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
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
