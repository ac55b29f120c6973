import type { Knex } from 'knex';
import { liveRowsFunction } from './160_live_statement_notify';
import { liveBackupsFunction } from './182_backup_live_events';
import { batchesBuiltOnce } from './185_live_events_built_once';

/**
 * The busy live triggers (deployment log lines and device states, backup jobs) build and send
 * their events only while some controller has a live subscriber. Each controller replica with at
 * least one /api/live connection keeps a row in live_watchers, refreshed every 30 s and deleted
 * when its last connection closes; a row not refreshed for 2 minutes (its replica died) counts
 * for nothing. Without a watcher the triggers return before building any JSON: measured over a
 * 500-device deploy (track_functions), they were 87-93 ms of PostgreSQL's 550-670 ms, and a
 * transaction that notifies also takes the notification queue's lock at commit, which serializes
 * the commits of every session that notifies. The row-level trigger of deployments and snapshots
 * (one event per status change) is left as it is.
 */
const GUARD = `
      IF NOT sb_live_watched() THEN RETURN NULL; END IF;`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TABLE live_watchers (
    replica_id uuid PRIMARY KEY,
    seen_at timestamptz NOT NULL DEFAULT now())`);
  await knex.raw(`CREATE FUNCTION sb_live_watched() RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT EXISTS (SELECT 1 FROM live_watchers WHERE seen_at > now() - interval '2 minutes') $$`);
  await knex.raw(liveRowsFunction(batchesBuiltOnce, GUARD));
  await knex.raw(liveBackupsFunction(batchesBuiltOnce, GUARD));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(liveRowsFunction(batchesBuiltOnce));
  await knex.raw(liveBackupsFunction(batchesBuiltOnce));
  await knex.raw('DROP FUNCTION sb_live_watched()');
  await knex.raw('DROP TABLE live_watchers');
}
