/**
 * Migration 140 moves discovery records from a row per record to a row per device and section.
 * Run against a real database: records written in the old layout (by the migration's down) come
 * back through up as the same sections, in the same order, with the latest poll and time.
 */
import knex, { type Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { down, up } from '../../migrations/140_discovery_sections';
import setupTemplate from '../helpers/global-setup';
import { createTestDatabase } from '../helpers/postgres';

let db: Knex;
let drop: () => Promise<void>;

beforeAll(async () => {
  await setupTemplate();
  const database = await createTestDatabase();
  drop = database.drop;
  db = knex({ client: 'pg', connection: database.url });
});

afterAll(async () => {
  await db?.destroy();
  await drop?.();
});

const one = async <T>(sql: string, bindings: unknown[] = []) => (await db.raw(sql, bindings as never)).rows[0] as T;

describe('migration 140 (discovery sections)', () => {
  it('turns each device section of records into one row, and back', async () => {
    const org = await one<{ id: string }>("INSERT INTO organizations (name) VALUES ('m140') RETURNING id");
    const profile = await one<{ id: string }>("INSERT INTO connection_profiles (org_id, name, username) VALUES (?, 'p', 'u') RETURNING id", [org.id]);
    const device = await one<{ id: string }>(
      "INSERT INTO devices (org_id, name, host, device_type, profile_id) VALUES (?, 'r1', '10.0.0.1', 'vendor_ios', ?) RETURNING id",
      [org.id, profile.id],
    );
    const poll = (at: string) =>
      one<{ id: string }>(
        "INSERT INTO discovery_polls (org_id, device_id, trigger, transport, status, finished_at) VALUES (?, ?, 'manual', 'ssh', 'succeeded', ?) RETURNING id",
        [org.id, device.id, at],
      );
    const older = await poll('2026-01-01T00:00:00Z');
    const newer = await poll('2026-01-02T00:00:00Z');

    await down(db); // the old layout, empty
    const row = (kind: string, section: string, position: number, pollId: string, at: string, data: unknown) => ({
      org_id: org.id,
      device_id: device.id,
      kind,
      section,
      position,
      poll_id: pollId,
      data: JSON.stringify(data),
      collected_at: at,
    });
    await db('discovery_records').insert([
      row('interfaces', 'interfaces', 1, newer.id, '2026-01-02T00:00:00Z', { name: 'Gi0/2' }),
      row('interfaces', 'interfaces', 0, newer.id, '2026-01-02T00:00:00Z', { name: 'Gi0/1', addresses: ['10.0.0.1/24'] }),
      row('neighbors', 'cdp', 0, older.id, '2026-01-01T00:00:00Z', { remote_device: 'r2' }),
      row('neighbors', 'lldp', 0, newer.id, '2026-01-02T00:00:00Z', { remote_device: 'r3' }),
    ]);

    await up(db);
    const sections = await db('discovery_sections')
      .where({ device_id: device.id })
      .orderBy('section')
      .select('kind', 'section', 'poll_id', 'records', 'collected_at');
    expect(sections).toEqual([
      { kind: 'neighbors', section: 'cdp', poll_id: older.id, records: [{ remote_device: 'r2' }], collected_at: new Date('2026-01-01T00:00:00Z') },
      {
        kind: 'interfaces',
        section: 'interfaces',
        poll_id: newer.id,
        records: [{ name: 'Gi0/1', addresses: ['10.0.0.1/24'] }, { name: 'Gi0/2' }],
        collected_at: new Date('2026-01-02T00:00:00Z'),
      },
      { kind: 'neighbors', section: 'lldp', poll_id: newer.id, records: [{ remote_device: 'r3' }], collected_at: new Date('2026-01-02T00:00:00Z') },
    ]);
    expect(await db.schema.hasTable('discovery_records')).toBe(false);

    // And down gives the records back a row each, numbered from 0 within their section.
    await down(db);
    const records = await db('discovery_records')
      .where({ device_id: device.id })
      .orderBy(['section', 'position'])
      .select('section', 'position', 'data');
    expect(records).toEqual([
      { section: 'cdp', position: 0, data: { remote_device: 'r2' } },
      { section: 'interfaces', position: 0, data: { name: 'Gi0/1', addresses: ['10.0.0.1/24'] } },
      { section: 'interfaces', position: 1, data: { name: 'Gi0/2' } },
      { section: 'lldp', position: 0, data: { remote_device: 'r3' } },
    ]);
    await up(db);
  });
});
