import type { Knex } from 'knex';

/**
 * Devices per organization, kept exact by statement-level triggers (transition tables: one
 * counter update per statement, so a 10,000-row import costs one row write). GET /api/devices
 * without filters reads its total here instead of counting the organization's rows.
 * No foreign key: rows of a deleted organization are harmless and deleting one must not fail
 * while its devices cascade away.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('device_counts', (t) => {
    t.uuid('org_id').primary();
    t.bigInteger('devices').notNullable().defaultTo(0);
  });
  await knex.raw(`
    CREATE FUNCTION device_counts_insert() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO device_counts (org_id, devices)
        SELECT org_id, count(*) FROM inserted GROUP BY org_id
      ON CONFLICT (org_id) DO UPDATE SET devices = device_counts.devices + EXCLUDED.devices;
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE FUNCTION device_counts_delete() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE device_counts c SET devices = c.devices - d.n
        FROM (SELECT org_id, count(*) AS n FROM deleted GROUP BY org_id) d WHERE c.org_id = d.org_id;
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE FUNCTION device_counts_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM device_counts;
      RETURN NULL;
    END $$`);
  await knex.raw(
    'CREATE TRIGGER device_counts_insert AFTER INSERT ON devices REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION device_counts_insert()',
  );
  await knex.raw(
    'CREATE TRIGGER device_counts_delete AFTER DELETE ON devices REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION device_counts_delete()',
  );
  await knex.raw('CREATE TRIGGER device_counts_truncate AFTER TRUNCATE ON devices FOR EACH STATEMENT EXECUTE FUNCTION device_counts_truncate()');
  await knex.raw('INSERT INTO device_counts (org_id, devices) SELECT org_id, count(*) FROM devices GROUP BY org_id');
}

export async function down(knex: Knex): Promise<void> {
  for (const trigger of ['device_counts_insert', 'device_counts_delete', 'device_counts_truncate']) {
    await knex.raw(`DROP TRIGGER IF EXISTS ${trigger} ON devices`);
    await knex.raw(`DROP FUNCTION IF EXISTS ${trigger}()`);
  }
  await knex.schema.dropTableIfExists('device_counts');
}
