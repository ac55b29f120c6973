import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    // Most files wait on real peers (agents, sshd, slapd, NATS), not the CPU: three at a time
    // keeps a 2-core CI machine busy without starving timing-sensitive sessions.
    maxWorkers: 3,
    // SWITCHBOARD_TEST_DB=pglite (any suite on the embedded database) is several times slower to start.
    testTimeout: process.env.SWITCHBOARD_TEST_DB === 'pglite' ? 120_000 : 30_000,
    hookTimeout: process.env.SWITCHBOARD_TEST_DB === 'pglite' ? 240_000 : 60_000,
    globalSetup: ['test/helpers/global-setup.ts'],
  },
});
