import { defineConfig } from 'vitest/config';

const pglite = process.env.SWITCHBOARD_TEST_DB === 'pglite';

/**
 * Files whose controller, agent runtime and simulators run in the test's own process (nothing
 * killed or restarted, no browser). They run after the files of the other projects, which start
 * and kill processes and are the slowest.
 */
const SHARED_PROCESS = [
  'admin',
  'auth',
  'configs',
  'deployments',
  'drivers',
  'foundation',
  'instances',
  'inventory',
  'snapshots',
  'stacks',
  'tasks',
  'templates',
]
  .map((dir) => `test/${dir}/**/*.test.ts`)
  .concat(
    [
      'agents/agents-api',
      'agents/dispatch-kicks',
      'agents/inprocess-link',
      'agents/installations',
      'agents/limit',
      'agents/port-link',
      'agents/progress-sender',
      'agents/replicas',
      'agents/result-batches',
      'agents/result-contract',
      'agents/results-gather',
      'agents/signatures',
      'agents/sites-health',
      'agents/state-dir',
      'agents/transcript',
      'console/logic',
      'console/serving',
      'discovery/!(gnmi-profile-ca)',
      'live/access',
      'live/backup-events',
      'live/live',
    ].map((file) => `test/${file}.test.ts`),
  );
/**
 * The contract suites on PGlite: each file sets SWITCHBOARD_TEST_DB=pglite before the suite it
 * imports, which would carry over to the next file of its worker, so they share workers only with
 * each other.
 */
const PGLITE = ['test/pglite/**/*.test.ts'];

export default defineConfig({
  test: {
    pool: 'forks',
    // Most files wait on real peers (agents, sshd, slapd, NATS), not the CPU: three at a time
    // keeps a 2-core CI machine busy without starving timing-sensitive sessions.
    maxWorkers: 3,
    // SWITCHBOARD_TEST_DB=pglite (any suite on the embedded database) is several times slower to start.
    testTimeout: pglite ? 120_000 : 30_000,
    hookTimeout: pglite ? 240_000 : 60_000,
    globalSetup: ['test/helpers/global-setup.ts'],
    // Not isolated: a worker runs file after file in one process, so the controller's modules load
    // once per worker instead of once per file (docs/testing.md says what a file must leave behind).
    isolate: false,
    // Projects run in name order: own-processes (files that start, kill and restart controller,
    // agent and NATS processes, or drive chromium: the slowest) first, then pglite-process, then
    // shared-process.
    projects: [
      { extends: true, test: { name: 'shared-process', include: SHARED_PROCESS } },
      { extends: true, test: { name: 'pglite-process', include: PGLITE } },
      { extends: true, test: { name: 'own-processes', include: ['test/**/*.test.ts'], exclude: [...SHARED_PROCESS, ...PGLITE] } },
    ],
  },
});
