import { loadConfig, ConfigError } from '../config';
import { createDb } from './knex';
import { migrateLatest } from './migrate';

try {
  const config = loadConfig();
  const db = await createDb(config.databaseUrl, config.dataDir);
  const applied = await migrateLatest(db);
  console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
  await db.destroy();
} catch (err) {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
}
