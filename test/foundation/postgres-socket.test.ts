/**
 * DATABASE_URL over PostgreSQL's Unix socket, the cheaper path for a controller on the database's
 * machine (docs/configuration.md): the config takes the URL and the controller's pool connects
 * through the socket (the server sees no client address), not over TCP.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { loadConfig } from '../../controller/src/config';
import { createDb } from '../../controller/src/db/knex';
import { createTestDatabase } from '../helpers/postgres';

const SOCKET_DIR = '/var/run/postgresql';
const dataDir = mkdtempSync(join(tmpdir(), 'sb-socket-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

it.skipIf(!existsSync(join(SOCKET_DIR, '.s.PGSQL.5432')))('connects through the Unix socket named by DATABASE_URL', async () => {
  const database = await createTestDatabase();
  const url = `postgres://postgres@localhost/${database.name}?host=${SOCKET_DIR}`;
  const config = loadConfig({ SWITCHBOARD_DATA_DIR: dataDir, DATABASE_URL: url });
  expect(config.databaseUrl).toBe(url);
  const db = await createDb(config.databaseUrl, dataDir);
  try {
    const { rows } = await db.raw('SELECT inet_client_addr() AS client, current_database() AS name, count(*)::int AS users FROM users');
    expect(rows[0]).toMatchObject({ client: null, name: database.name });
    expect(rows[0].users).toBeGreaterThanOrEqual(0);
  } finally {
    await db.destroy();
    await database.drop();
  }
});
