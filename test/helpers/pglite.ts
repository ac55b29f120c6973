import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDb } from '../../controller/src/db/knex';
import { migrateLatest } from '../../controller/src/db/migrate';
import { templateName } from './postgres';

/**
 * Which database startTestController() gives: PostgreSQL, or the embedded PGlite that `npm start`
 * uses. SWITCHBOARD_TEST_DB=pglite runs any suite on PGlite; test/pglite/ does so for the contract suites.
 */
export function testDatabaseKind(): 'postgres' | 'pglite' {
  return process.env.SWITCHBOARD_TEST_DB === 'pglite' ? 'pglite' : 'postgres';
}

/**
 * A migrated PGlite data directory per migration set, shared by every test file: creating a
 * PGlite database and migrating it takes 15-30 s on a busy machine, copying this one about one.
 * Built under a temporary name and renamed, so parallel workers never copy a half-built one.
 */
async function pgliteTemplate(): Promise<string> {
  const template = join(tmpdir(), `${templateName()}_pglite`);
  if (existsSync(template)) return template;
  const building = `${template}.b${process.pid}-${randomBytes(3).toString('hex')}`;
  const db = await createDb(null, building);
  try {
    await migrateLatest(db);
  } finally {
    await db.destroy();
  }
  try {
    renameSync(join(building, 'pglite'), template);
  } catch (err) {
    if (!existsSync(template)) throw err; // otherwise another worker won the race
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
  return template;
}

/** Puts a fresh, migrated PGlite database into the data dir, where createDb(null, dataDir) opens it. */
export async function seedPgliteDataDir(dataDir: string): Promise<void> {
  const template = await pgliteTemplate();
  mkdirSync(dataDir, { recursive: true });
  cpSync(template, join(dataDir, 'pglite'), { recursive: true });
}
