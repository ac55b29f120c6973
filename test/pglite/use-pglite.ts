import { vi } from 'vitest';

/**
 * Imported first by every file here: the suite imported next runs on PGlite, the embedded
 * database of `npm start`, instead of PostgreSQL (startTestController reads this at call time).
 * PGlite runs PostgreSQL as WebAssembly in the test's own process, on one connection: opening it
 * and starting the controller take several times longer than on PostgreSQL on a busy machine.
 */
process.env.SWITCHBOARD_TEST_DB = 'pglite';
vi.setConfig({ hookTimeout: 240_000, testTimeout: 120_000 });
