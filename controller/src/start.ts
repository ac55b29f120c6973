import { runFromEnvironment } from './server';

/**
 * `npm start`: all-in-one. The controller plus a built-in agent in the default pool;
 * with no DATABASE_URL the database is embedded (PGlite) under the data dir.
 */
await runFromEnvironment('Switchboard is up; API explorer at /api/docs');
