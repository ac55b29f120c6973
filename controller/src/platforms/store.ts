import type { Db } from '../db/knex';

export interface PlatformRow {
  id: string;
  name: string;
  display_name: string;
  transport: 'gnmi' | 'netconf';
  default_port: number;
  config_format: string;
  capabilities: Record<string, unknown>;
  created_at: Date;
}

/** The seeded platform catalogue (shared by every organization, read-only). */
export class PlatformStore {
  constructor(private readonly db: Db) {}

  list(): Promise<PlatformRow[]> {
    return this.db('platforms').orderBy('name').select('*');
  }

  findById(id: string): Promise<PlatformRow | undefined> {
    return this.db('platforms').where({ id }).first();
  }

  findByName(name: string): Promise<PlatformRow | undefined> {
    return this.db('platforms').where({ name }).first();
  }
}
