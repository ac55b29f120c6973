import knexFactory from 'knex';
import { migrateLatest } from '../../controller/src/db/migrate';
import { databaseUrl, templateName, usePostgresSocket, withAdmin } from './postgres';

/**
 * Migrates one template database per migration set; every test file clones it. Built under a
 * temporary name and renamed, so parallel runs never clone a half-migrated template.
 */
export default async function setup(): Promise<void> {
  await usePostgresSocket();
  const template = templateName();
  const exists = await withAdmin(async (c) => (await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [template])).rowCount === 1);
  if (exists) return;
  const building = `${template}_b${process.pid}`;
  await withAdmin((c) => c.query(`CREATE DATABASE ${building}`));
  const db = knexFactory({ client: 'pg', connection: databaseUrl(building), pool: { min: 0, max: 1 } });
  try {
    await migrateLatest(db);
  } finally {
    await db.destroy();
  }
  await withAdmin(async (c) => {
    try {
      await c.query(`ALTER DATABASE ${building} RENAME TO ${template}`);
    } catch {
      await c.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`); // another run won the race
    }
  });
}
