import type { Knex } from 'knex';
import { batchesOf, liveRowsFunction } from './160_live_statement_notify';
import { liveBackupsFunction } from './182_backup_live_events';

/**
 * The live triggers of migrations 160 and 182 build each event's JSON once. Their batching query
 * read the events' CTE twice (an event's size, then the event itself), and PostgreSQL inlines such
 * a CTE, so every event was built twice and carried through the window's sort: measured over 1,024
 * log lines, 23 ms a statement, 10.6 ms with the CTE materialized (the events alone take 5 ms).
 * With pg_stat_statements over a 500-device deploy, the deployment_logs trigger was about an
 * eighth of PostgreSQL's time. Same notifications, same order, same batches.
 */
export const batchesBuiltOnce = (events: string) => batchesOf(events, true);

export async function up(knex: Knex): Promise<void> {
  await knex.raw(liveRowsFunction(batchesBuiltOnce));
  await knex.raw(liveBackupsFunction(batchesBuiltOnce));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(liveRowsFunction(batchesOf));
  await knex.raw(liveBackupsFunction(batchesOf));
}
