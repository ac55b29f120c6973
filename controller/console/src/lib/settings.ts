/** Keys whose value is never shown: the field only sets a new one. */
const SECRET = /(password|secret)$/;

export interface SettingRow {
  key: string;
  value: unknown;
  /** Write-only: `value` says only whether one is set. */
  secret: boolean;
}

/**
 * The settings table's rows, sorted by key. The API answers a secret as `has_<key>: boolean`
 * (never its value): it is listed under its own key, so a new one is saved to that key.
 */
export function settingRows(values: Record<string, unknown>): SettingRow[] {
  return Object.entries(values)
    .map(([key, value]) => {
      const own = key.startsWith('has_') ? key.slice(4) : key;
      const secret = own !== key && SECRET.test(own) && typeof value === 'boolean';
      return { key: secret ? own : key, value, secret };
    })
    .sort((a, b) => a.key.localeCompare(b.key));
}

/** Reads the text back with the type the setting had (number, boolean, list); strings and secrets stay strings. */
export function parseSetting(text: string, row: Pick<SettingRow, 'value' | 'secret'> | undefined): unknown {
  const previous = row?.value;
  if (!row || row.secret || typeof previous === 'string' || previous === null || previous === undefined) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
