/**
 * The walk-through of docs/api-tour.md, as written, on a fresh data directory: `npm start` (embedded
 * database, built-in agent) and `npm run sim` as processes, then every ```sh runnable block in one
 * bash session. Only the ports differ from the page: the documented ones may be busy on a shared
 * machine, so each is swapped for a free one.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/net';
import { ROOT, spawnProcess, spawnTs, stopAll, waitUntil, type Proc } from '../helpers/processes';
import { brokenPromises, runnableDoc } from './runnable';

const TOUR = join(ROOT, 'docs/api-tour.md');
/** The ports the page documents: controller, SSH, NETCONF, gNMI, the simulator's admin port. */
const DOCUMENTED_PORTS = [8080, 10022, 10830, 19339, 10080] as const;

let ports: Map<number, number>;
let dataDir: string;
let sim: Proc;
let controller: Proc;

const onFreePorts = (text: string) => text.replace(new RegExp(`\\b(${DOCUMENTED_PORTS.join('|')})\\b`, 'g'), (p) => String(ports.get(Number(p))));
/** The quoted value of `NAME=...` in the page's start block. */
const documentedAdminPassword = () => /SWITCHBOARD_ADMIN_PASSWORD='([^']+)' npm start/.exec(readFileSync(TOUR, 'utf8'))![1];
const cells = (table: string) =>
  table
    .trim()
    .split('\n')
    .map((row) => row.trim().split(/\s+/));

beforeAll(async () => {
  ports = new Map();
  for (const p of DOCUMENTED_PORTS) ports.set(p, await freePort());
  dataDir = mkdtempSync(join(tmpdir(), 'sb-docs-'));
  const port = (p: number) => String(ports.get(p));
  sim = spawnTs('test/sim/main.ts', {}, [
    '--ssh-port',
    port(10022),
    '--netconf-port',
    port(10830),
    '--gnmi-port',
    port(19339),
    '--admin-port',
    port(10080),
  ]);
  controller = spawnTs('controller/src/start.ts', {
    PORT: port(8080),
    SWITCHBOARD_DATA_DIR: dataDir,
    SWITCHBOARD_ADMIN_PASSWORD: documentedAdminPassword(),
    LOG_LEVEL: 'warn',
  });
  await waitUntil('npm run sim', () => sim.output().includes('Ctrl-C to stop'), sim, 120_000);
  await waitUntil('npm start', async () => (await fetch(`http://127.0.0.1:${port(8080)}/healthz`)).ok, controller, 600_000);
}, 660_000);

afterAll(async () => {
  await controller?.stop(30_000);
  await stopAll();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('docs/api-tour.md', () => {
  it("starts from the README's one-machine commands", () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme).toContain('npm ci && npm start');
    expect(readme).toMatch(/^npm run sim$/m);
    expect(readme).toContain(`SWITCHBOARD_ADMIN_PASSWORD='${documentedAdminPassword()}' npm start`);
    expect(readme).toContain('](docs/api-tour.md)');
  });

  it('npm run sim prints the device table the page shows', () => {
    const page = readFileSync(TOUR, 'utf8');
    const documented = /```text\n(NAME +ADDRESS[\s\S]*?)```/.exec(page)![1];
    const printed = sim
      .output()
      .split('\n')
      .filter((l) => /^(NAME|sim-)/.test(l))
      .join('\n');
    expect(cells(printed)).toEqual(cells(onFreePorts(documented)));
  });

  it('every runnable block runs as written and prints what the page promises', { timeout: 900_000 }, async () => {
    const doc = runnableDoc(TOUR);
    expect(doc.groups.length).toBeGreaterThan(20);
    const bash = spawnProcess('bash', ['-c', onFreePorts(doc.script)]);
    await bash.exited;
    expect(brokenPromises(doc, bash.output())).toEqual([]);
  });
});
