import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    // Most files wait on real peers (agents, sshd, slapd, NATS), not the CPU: three at a time
    // keeps a 2-core CI machine busy without starving timing-sensitive sessions.
    maxWorkers: 3,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    globalSetup: ['test/helpers/global-setup.ts'],
  },
});
