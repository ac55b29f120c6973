import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Knex } from 'knex';

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), '../../../migrations');

interface Migration {
  up(knex: Knex): Promise<void>;
  down?(knex: Knex): Promise<void>;
}

/** Numbered TypeScript files in migrations/, applied in name order. */
const migrationSource: Knex.MigrationSource<string> = {
  async getMigrations() {
    return readdirSync(MIGRATIONS_DIR)
      .filter((name) => /^\d{3}_[\w-]+\.ts$/.test(name))
      .sort();
  },
  getMigrationName: (name) => name,
  async getMigration(name): Promise<Knex.Migration> {
    const module = (await import(pathToFileURL(join(MIGRATIONS_DIR, name)).href)) as Migration;
    return { up: module.up, down: module.down ?? (async () => {}) };
  },
};

export async function migrateLatest(db: Knex): Promise<string[]> {
  const [, applied] = (await db.migrate.latest({ migrationSource })) as [number, string[]];
  return applied;
}

/** Whether every migration on disk has been applied (used by readiness checks). */
export async function pendingMigrations(db: Knex): Promise<string[]> {
  const [, pending] = (await db.migrate.list({ migrationSource })) as [unknown[], { file: string }[]];
  return pending.map((item) => (typeof item === 'string' ? item : item.file));
}
