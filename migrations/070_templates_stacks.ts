import type { Knex } from 'knex';

/**
 * Platforms (a seeded catalogue shared by every organization), config templates with their
 * versions, and stacks.
 *
 * Platform names are `<os label>-<transport>`. The OS label is the inventory's device_type for
 * the OS families that speak an automation transport (vendor_xe, vendor_xr, vendor_nxos,
 * vendor_junos, vendor_eos), plus two vendor-neutral families: openconfig (gNMI with OpenConfig
 * models) and ietf (NETCONF with IETF models).
 */
const GNMI_PORTS: Record<string, number> = { vendor_xe: 9339, vendor_xr: 57400, vendor_nxos: 50051, vendor_junos: 32767, vendor_eos: 6030 };
const OS_FAMILIES: { label: string; display: string; openconfig: boolean }[] = [
  { label: 'vendor_xe', display: 'Vendor XE', openconfig: true },
  { label: 'vendor_xr', display: 'Vendor XR', openconfig: true },
  { label: 'vendor_nxos', display: 'Vendor NX-OS', openconfig: true },
  { label: 'vendor_junos', display: 'Vendor Junos', openconfig: true },
  { label: 'vendor_eos', display: 'Vendor EOS', openconfig: true },
];

function platformRows() {
  const rows: Record<string, unknown>[] = [];
  for (const os of OS_FAMILIES) {
    rows.push({
      name: `${os.label}-gnmi`,
      display_name: `${os.display} (gNMI)`,
      transport: 'gnmi',
      default_port: GNMI_PORTS[os.label],
      config_format: 'json',
      capabilities: { openconfig: os.openconfig, native_models: true, encodings: ['json_ietf'], cli_origin: true },
    });
    rows.push({
      name: `${os.label}-netconf`,
      display_name: `${os.display} (NETCONF)`,
      transport: 'netconf',
      default_port: 830,
      config_format: 'xml',
      capabilities: { openconfig: os.openconfig, native_models: true, candidate: true, confirmed_commit: true },
    });
  }
  rows.push({
    name: 'openconfig-gnmi',
    display_name: 'OpenConfig (gNMI)',
    transport: 'gnmi',
    default_port: 9339,
    config_format: 'json',
    capabilities: { openconfig: true, native_models: false, encodings: ['json_ietf'], cli_origin: false },
  });
  rows.push({
    name: 'ietf-netconf',
    display_name: 'IETF models (NETCONF)',
    transport: 'netconf',
    default_port: 830,
    config_format: 'xml',
    capabilities: { openconfig: false, native_models: false, candidate: true, confirmed_commit: true },
  });
  return rows;
}

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('platforms', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('name').notNullable().unique();
    t.text('display_name').notNullable();
    t.text('transport').notNullable();
    t.integer('default_port').notNullable();
    t.text('config_format').notNullable();
    t.jsonb('capabilities').notNullable().defaultTo('{}');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex('platforms').insert(platformRows().map((row) => ({ ...row, capabilities: JSON.stringify(row.capabilities) })));

  await knex.schema.createTable('config_templates', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('description').notNullable().defaultTo('');
    t.text('platform').notNullable();
    t.text('config_format').notNullable();
    t.text('source').notNullable();
    t.text('operation').notNullable().defaultTo('replace');
    t.text('target_path');
    t.integer('current_version').notNullable().defaultTo(1);
    t.jsonb('variables').notNullable().defaultTo('[]');
    t.uuid('created_by');
    t.uuid('updated_by');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['org_id', 'name']);
    t.index(['org_id', 'platform']);
  });

  await knex.schema.createTable('config_template_versions', (t) => {
    t.uuid('template_id').notNullable().references('config_templates.id').onDelete('CASCADE');
    t.integer('version').notNullable();
    t.text('source').notNullable();
    t.jsonb('variables').notNullable().defaultTo('[]');
    t.text('created_by').notNullable().defaultTo('');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['template_id', 'version']);
  });

  await knex.schema.createTable('stacks', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('description').notNullable().defaultTo('');
    // Ordered services: [{ template_id, order, variables?, api_variables? }].
    t.jsonb('services').notNullable().defaultTo('[]');
    t.boolean('atomic').notNullable().defaultTo(true);
    t.boolean('shared').notNullable().defaultTo(false);
    t.jsonb('variable_config').notNullable().defaultTo('{}');
    t.uuid('created_by');
    t.uuid('updated_by');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['org_id', 'name']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['stacks', 'config_template_versions', 'config_templates', 'platforms']) await knex.schema.dropTableIfExists(table);
}
