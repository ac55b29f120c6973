import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { appError } from '../errors/app-error';
import type { SecretBox } from '../../../shared/src/crypto/secret-box';
import { SETTING_DEFINITIONS } from './settings-definitions';
import { own } from '../../../shared/src/own';
import type { SettingsStore } from './settings-store';

const GLOBAL = 'global';

/** Reads settings with org values over global values over defaults; writes validate each key. */
export class SettingsService {
  constructor(
    private readonly store: SettingsStore,
    private readonly secrets: SecretBox,
  ) {}

  private definition(key: string) {
    const definition = own(SETTING_DEFINITIONS, key);
    if (!definition) throw appError('UNKNOWN_SETTING', `Unknown setting '${key}'`);
    return definition;
  }

  async get<T = unknown>(key: string, orgId?: string): Promise<T> {
    return (await this.getMany([key], orgId))[key] as T;
  }

  /** Several settings in one query (e.g. the lockout policy, read on every /api/auth request). */
  async getMany<K extends string>(keys: K[], orgId?: string): Promise<Record<K, unknown>> {
    const definitions = keys.map((key) => this.definition(key));
    const scopes = orgId ? [orgId, GLOBAL] : [GLOBAL];
    const rows = await this.store.rows(scopes, keys);
    const result = {} as Record<K, unknown>;
    for (const [i, key] of keys.entries()) {
      const definition = definitions[i];
      const own = definition.scope === 'org' && orgId ? rows.find((r) => r.key === key && r.scope === orgId) : undefined;
      const row = own ?? rows.find((r) => r.key === key && r.scope === GLOBAL);
      if (row === undefined) result[key] = definition.default;
      // A cleared secret is stored as null: nothing to decrypt.
      else if (definition.secret && row.value !== null) result[key] = await this.secrets.open(row.value as string);
      else result[key] = row.value;
    }
    return result;
  }

  /** Every setting as the organization sees it; secrets appear only as has_<key> booleans. */
  async all(orgId: string): Promise<Record<string, unknown>> {
    const rows = await this.store.rows([orgId, GLOBAL]);
    const result: Record<string, unknown> = {};
    for (const [key, definition] of Object.entries(SETTING_DEFINITIONS)) {
      const own = rows.find((r) => r.key === key && r.scope === (definition.scope === 'org' ? orgId : GLOBAL));
      const fallback = rows.find((r) => r.key === key && r.scope === GLOBAL);
      const row = own ?? fallback;
      if (definition.secret) result[`has_${key}`] = row !== undefined && row.value !== null;
      else result[key] = row ? row.value : definition.default;
    }
    return result;
  }

  /** Validates every key first so a bad value leaves nothing half-written. */
  async update(orgId: string, values: Record<string, unknown>, canChangeGlobal: boolean): Promise<void> {
    const writes: { scope: string; key: string; value: string }[] = [];
    for (const [key, value] of Object.entries(values)) {
      const definition = this.definition(key);
      if (definition.scope === GLOBAL && !canChangeGlobal) {
        throw appError('FORBIDDEN', `Setting '${key}' is platform-wide and needs platform.admin`);
      }
      const ok = definition.secret ? value === null || typeof value === 'string' : Value.Check(definition.schema, value);
      if (!ok) throw appError('INVALID_SETTING', `Setting '${key}': ${describe(definition.schema, value)}`);
      if (definition.references && value !== null) await this.assertReference(key, definition.references, value as string, orgId);
      const stored = definition.secret && typeof value === 'string' ? await this.secrets.seal(value) : value;
      writes.push({ scope: definition.scope === 'org' ? orgId : GLOBAL, key, value: JSON.stringify(stored) });
    }
    if (writes.length === 0) return;
    await this.store.upsert(writes);
  }

  /** An id setting must name a row of the organization itself, never another one's (a dangling reference). */
  private async assertReference(key: string, target: { table: string; what: string }, id: string, orgId: string): Promise<void> {
    if (await this.store.orgRowExists(target.table, id, orgId)) return;
    throw appError('UNKNOWN_REFERENCE', `Setting '${key}': no ${target.what} ${id} in this organization`);
  }

  /** Seeds values from the environment at start without overwriting what admins changed. */
  async seed(values: Record<string, unknown>): Promise<void> {
    for (const [key, value] of Object.entries(values)) {
      if (value === undefined) continue;
      const definition = this.definition(key);
      const stored = definition.secret && typeof value === 'string' ? await this.secrets.seal(value) : value;
      await this.store.insertIfAbsent({ scope: GLOBAL, key, value: JSON.stringify(stored) });
    }
  }
}

function describe(schema: TSchema, value: unknown): string {
  const first = [...Value.Errors(schema, value)][0];
  return first ? `${first.message} (got ${JSON.stringify(value)})` : `invalid value ${JSON.stringify(value)}`;
}
