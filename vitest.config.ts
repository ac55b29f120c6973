import { defineConfig } from 'vitest/config';

const pglite = process.env.SWITCHBOARD_TEST_DB === 'pglite';

/**
 * Files whose controller, agent runtime and simulators run in the test's own process (nothing
 * killed or restarted, no browser): one worker runs many of them, so the controller's modules load
 * once per worker instead of once per file (about half of these files' CPU).
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
].map((dir) => `test/${dir}/**/*.test.ts`);

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
    projects: [
      { extends: true, test: { name: 'shared-process', include: SHARED_PROCESS, isolate: false } },
      { extends: true, test: { name: 'own-process', include: ['test/**/*.test.ts'], exclude: SHARED_PROCESS } },
    ],
  },
});
