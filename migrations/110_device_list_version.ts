import type { Knex } from 'knex';

/**
 * A per-organization version of everything GET /api/devices can show, so a controller may keep
 * list answers in memory and still answer a write made through any controller at once: a cached
 * body is reused only while the organization's version is the one read with it.
 *
 * Every statement that inserts, deletes or truncates devices, or updates a column the list shows
 * or filters on, gives the organization's device_counts row a new version (statement-level
 * triggers with transition tables, as in 022: one row write per statement, not per device; the
 * bump is in the writer's transaction, so a version and the rows it stands for become visible
 * together). Versions come from one sequence, never per row, so a value is never reused, not
 * even after TRUNCATE or when an organization's row is recreated. Updates that change no listed
 * column (next_poll_at after each poll, NetBox sync stamps) leave the version alone.
 */
const LISTED_COLUMNS = [
  'id',
  'org_id',
  'name',
  'host',
  'device_type',
  'manufacturer',
  'model',
  'platform',
  'site',
  'site_id',
  'source',
  'profile_id',
  'created_at',
  'updated_at',
];

/**
 * 022's counter functions, with (up) or without (down) the version bump. With it, TRUNCATE keeps
 * the rows (zeroed, new version) rather than deleting them as 022 did.
 */
async function counterFunctions(knex: Knex, versioned: boolean): Promise<void> {
  const bump = versioned ? ", version = nextval('device_list_version_seq')" : '';
  const bodies = {
    device_counts_insert: `INSERT INTO device_counts (org_id, devices)
        SELECT org_id, count(*) FROM inserted GROUP BY org_id
      ON CONFLICT (org_id) DO UPDATE SET devices = device_counts.devices + EXCLUDED.devices${bump};`,
    device_counts_delete: `UPDATE device_counts c SET devices = c.devices - d.n${bump}
        FROM (SELECT org_id, count(*) AS n FROM deleted GROUP BY org_id) d WHERE c.org_id = d.org_id;`,
    device_counts_truncate: versioned ? `UPDATE device_counts SET devices = 0${bump};` : 'DELETE FROM device_counts;',
  };
  for (const [name, body] of Object.entries(bodies)) {
    await knex.raw(`CREATE OR REPLACE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${body} RETURN NULL; END $$`);
  }
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE SEQUENCE device_list_version_seq');
  await knex.raw("ALTER TABLE device_counts ADD COLUMN version bigint NOT NULL DEFAULT nextval('device_list_version_seq')");
  await counterFunctions(knex, true);
  // PostgreSQL refuses transition tables on an UPDATE OF <columns> trigger, so the function
  // compares the listed columns of old and new rows itself. Both organizations of a changed row
  // get a new version (a device moved between organizations changes both lists).
  const listed = (alias: string) => LISTED_COLUMNS.map((c) => `${alias}.${c}`).join(', ');
  await knex.raw(`
    CREATE FUNCTION device_list_version_update() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE device_counts SET version = nextval('device_list_version_seq')
        WHERE org_id IN (
          SELECT unnest(ARRAY[o.org_id, n.org_id]) FROM previous o JOIN updated n ON n.id = o.id
          WHERE (${listed('o')}) IS DISTINCT FROM (${listed('n')}));
      RETURN NULL;
    END $$`);
  await knex.raw(`CREATE TRIGGER device_list_version_update AFTER UPDATE ON devices
    REFERENCING OLD TABLE AS previous NEW TABLE AS updated FOR EACH STATEMENT EXECUTE FUNCTION device_list_version_update()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER IF EXISTS device_list_version_update ON devices');
  await knex.raw('DROP FUNCTION IF EXISTS device_list_version_update()');
  await counterFunctions(knex, false);
  await knex.raw('ALTER TABLE device_counts DROP COLUMN IF EXISTS version');
  await knex.raw('DROP SEQUENCE IF EXISTS device_list_version_seq');
}
