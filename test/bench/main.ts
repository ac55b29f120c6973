/**
 * `npm run bench -- <name> [--flags]`: runs one benchmark and prints its figures.
 * A benchmark is a module exporting `run(args: string[]): Promise<void>`; add yours with one
 * line in BENCHMARKS below. Benchmarks measure and print; they never pass or fail.
 */

import { usePostgresSocket } from '../helpers/postgres';

export type Benchmark = { run(args: string[]): Promise<void> };

const BENCHMARKS: Record<string, { about: string; load: () => Promise<Benchmark> }> = {
  auth: { about: 'login/s, refresh/s and GET /api/auth/me requests/s with p50/p99', load: () => import('./auth') },
  inventory: { about: 'CSV import of 10,000 devices; device list requests/s with p50/p99', load: () => import('./inventory') },
  backup: { about: 'end-to-end bulk config pull through NATS and agents against simulated devices', load: () => import('./backup') },
  render: { about: 'stack render of 1,000 devices × 3 services (POST /stacks/:id/render)', load: () => import('./render') },
  poll: {
    about: 'end-to-end discovery polls of simulated devices through NATS and agents vs the driver and parsers alone (--devices 1000)',
    load: () => import('./poll'),
  },
  scale: {
    about:
      'one snapshot over simulated devices through agent processes in several sites: devices/s, per-agent spread, controller CPU and RSS, ' +
      'NATS messages (--agents 20 --devices 5000)',
    load: () => import('./scale'),
  },
  cluster: {
    about: 'one snapshot on a three-node NATS cluster (R3 streams) while a node is killed and restarted: exactly once, time (--devices 1000)',
    load: () => import('./cluster'),
  },
  console: {
    about: 'operator console in chromium with 10,000 devices: first-page JS size, page timings, Lighthouse scores (--devices 10000 --runs 5)',
    load: () => import('./console'),
  },
  signatures: {
    about: 'µs per sign and verify of job messages, results and heartbeats: crypto.ts next to jose (--iterations 2000 --config-kb 20)',
    load: () => import('./signatures'),
  },
  deploy: { about: 'end-to-end deployment of a two-service stack over gNMI vs the drivers alone (--devices 500)', load: () => import('./deploy') },
};

function usage(): string {
  const width = Math.max(...Object.keys(BENCHMARKS).map((name) => name.length));
  const lines = Object.entries(BENCHMARKS).map(([name, { about }]) => `  ${name.padEnd(width)}  ${about}`);
  return ['usage: npm run bench -- <name> [--flags]', '', 'benchmarks:', ...lines].join('\n');
}

const [name, ...args] = process.argv.slice(2);
if (!name || name === '--help' || name === '-h') {
  console.log(usage());
  process.exit(name ? 0 : 2);
}
const benchmark = BENCHMARKS[name];
if (!benchmark) {
  console.error(`unknown benchmark "${name}"\n\n${usage()}`);
  process.exit(2);
}
try {
  await usePostgresSocket();
  await (await benchmark.load()).run(args);
  process.exit(0);
} catch (err) {
  console.error(err);
  process.exit(1);
}
