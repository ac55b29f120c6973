import { randomBytes } from 'node:crypto';
import type { Db } from '../db/knex';
import { DEFAULT_PREFIX } from '../../../shared/src/nats/subjects';

/**
 * The installation's NATS subject prefix, written once at the first start and shared by its
 * replicas: a new installation gets its own (`sb_` and 10 random hex digits), so two of them on
 * one NATS server never answer each other's jobs or heartbeats. An installation that already has
 * enrolled agents keeps `sb`, the prefix their saved identities name.
 */
export async function installationPrefix(db: Db): Promise<string> {
  const existing = await db('installation').first('nats_prefix');
  if (existing) return existing.nats_prefix;
  const enrolled = await db('agents').whereNotNull('enrolled_at').where({ builtin: false }).first('id');
  const prefix = enrolled ? DEFAULT_PREFIX : `sb_${randomBytes(5).toString('hex')}`;
  await db('installation').insert({ singleton: 1, nats_prefix: prefix }).onConflict('singleton').ignore();
  return (await db('installation').first('nats_prefix')).nats_prefix;
}
