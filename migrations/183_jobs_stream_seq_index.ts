import type { Knex } from 'knex';

/**
 * The deadline sweep asks, before deleting a job batch's message from the stream, whether any job
 * it carried is still open (JobsStore.messageOpen: stream_seq and transport). A batch's jobs share
 * its stream sequence; this index answers from the open jobs only, however many finished ones the
 * table keeps.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    "CREATE INDEX jobs_open_stream_seq ON jobs (stream_seq) WHERE stream_seq IS NOT NULL AND status IN ('queued', 'dispatched', 'running')",
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS jobs_open_stream_seq');
}
